package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import javax.security.auth.login.LoginException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The handler runs as the enqueuer (V44, issue #30), the engine's part: the run-as user is stored
 * with the job (Java and SQL enqueue), reaches the handler with the claim, and a job whose identity
 * the container cannot establish is dead at once, whatever attempts it has left. The servers' part
 * (the identity itself) is RunAsIT's.
 */
class RunAsTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);

  private final Engine engine =
      Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
  private final RecordingEvents events = new RecordingEvents();

  @Test
  void aJavaEnqueueRecordsTheRunAsUserAndTheNextEnqueueOfTheTransactionDoesNotInheritIt()
      throws SQLException {
    long alice;
    long nobody;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      alice = engine.jobs().enqueue(c, job("reports", "alice"));
      nobody = engine.jobs().enqueue(c, job("reports", null));
      c.commit();
    }
    assertThat(db.queryText("SELECT run_as FROM pgbus.job WHERE id = ?", alice)).isEqualTo("alice");
    assertThat(db.queryText("SELECT run_as FROM pgbus.job WHERE id = ?", nobody)).isNull();
    // Not enqueued_by: that one falls back to the database role, never an application user.
    assertThat(db.queryText("SELECT enqueued_by FROM pgbus.job WHERE id = ?", alice))
        .isEqualTo("ops");
  }

  @Test
  void manyJobsAndABatchRecordTheRunAsUserOnEveryJob() throws SQLException {
    List<Long> ids;
    try (Connection c = db.connect()) {
      ids = engine.jobs().enqueueAll(c, List.of(job("reports", "bob"), job("reports", "bob")));
    }
    assertThat(ids).hasSize(2);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE run_as = 'bob'")).isEqualTo(2);
    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                engine.jobs().enqueueAll(c, List.of(job("reports", "bob"), job("reports", "eve")));
              }
            })
        .hasMessageContaining("one run-as user");
  }

  @Test
  void anSqlEnqueueRecordsRunAsOnlyWhenItSetsTheSetting() throws SQLException {
    long plain = db.queryLong("SELECT pgbus.enqueue('reports', '{}')");
    assertThat(db.queryText("SELECT run_as FROM pgbus.job WHERE id = ?", plain)).isNull();
    long named;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      c.createStatement().execute("SELECT set_config('pgbus.run_as', 'carol', true)");
      try (ResultSet rs =
          c.createStatement().executeQuery("SELECT pgbus.enqueue('reports', '{}')")) {
        rs.next();
        named = rs.getLong(1);
      }
      c.commit();
    }
    assertThat(db.queryText("SELECT run_as FROM pgbus.job WHERE id = ?", named)).isEqualTo("carol");
  }

  @Test
  void aNameTooLongForTheColumnIsRefusedOnTheJavaAndTheSqlPath() {
    String long257 = "u".repeat(257);
    assertThatThrownBy(() -> job("reports", long257))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("queue 'reports' runs its handler as the enqueuer")
        .hasMessageContaining("1 to 256 characters, but it has 257");
    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                c.createStatement()
                    .execute("SELECT set_config('pgbus.run_as', '" + long257 + "', true)");
                c.createStatement().executeQuery("SELECT pgbus.enqueue('reports', '{}')");
              }
            })
        .hasMessageContaining("job_run_as_check");
  }

  @Test
  void theClaimHandsTheRunAsUserToTheHandler() throws SQLException {
    var seen = new CopyOnWriteArrayList<String>();
    start(
        (job, tx) -> {
          seen.add(String.valueOf(job.claimed().runAs()));
          return null;
        });
    long id;
    try (Connection c = db.connect()) {
      id = engine.jobs().enqueue(c, job("run_as_seen", "dave"));
    }
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isNotNull();
    assertThat(seen).containsExactly("dave");
  }

  @Test
  void aJobWhoseIdentityIsRefusedIsDeadAtOnceWithTheCategoryFirst() throws SQLException {
    var calls = new AtomicInteger();
    start(
        (job, tx) -> {
          calls.incrementAndGet();
          // As a container hands it on: wrapped (an EJBException), its own cause the server's.
          throw new IllegalStateException(
              "container wrapper",
              new RunAsUnavailableException(
                  job.queue(),
                  job.id(),
                  "no user 'gone' in the registry",
                  new LoginException("user gone not found")));
        });
    long id;
    try (Connection c = db.connect()) {
      id =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "run_as_refused",
                      "{}",
                      EnqueueOptions.defaults().withMaxAttempts(5),
                      null,
                      null,
                      "gone"));
    }
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).as("dead").isNull();
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.attempt()).isEqualTo(1);
    assertThat(row.finalizedAt()).isNotNull();
    assertThat(row.errors().get(0).error())
        .startsWith("run-as identity unavailable: job " + id + " of queue 'run_as_refused'")
        .contains("no user 'gone' in the registry");
    assertThat(calls).hasValue(1);
  }

  @Test
  void theHistoryHasRunAsAtTheSamePositionAndTheViewReadsIt() throws SQLException {
    String position =
        """
        SELECT attnum FROM pg_attribute
         WHERE attrelid = ?::regclass AND attname = 'run_as' AND NOT attisdropped
        """;
    assertThat(db.queryLong(position, "pgbus.job_history"))
        .isEqualTo(db.queryLong(position, "pgbus.job"));
    long id;
    try (Connection c = db.connect()) {
      id = engine.jobs().enqueue(c, job("reports", "erin"));
    }
    assertThat(db.queryText("SELECT run_as FROM pgbus.job_all WHERE id = ?", id)).isEqualTo("erin");
  }

  private static NewJob job(String queue, String runAs) {
    return new NewJob(queue, "{}", EnqueueOptions.defaults(), "ops", null, runAs);
  }

  private void start(JobFunction handler) {
    engines.start(
        engines
            .builder(engines.config().capsule("main", 2, "run_as_seen", "run_as_refused").build())
            .events(events)
            .jobs(handler));
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.admin.JobView;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A handler's result is stored with its completion, in the same statement and transaction; an
 * over-sized one fails the attempt with nothing written; a result-less completion stays as it was.
 */
class JobResultTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final JobAdminStore admin = new JobAdminStore();
  private final JobStore store = new JobStore();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("CREATE TABLE IF NOT EXISTS result_business (job_id bigint PRIMARY KEY)");
    db.update("DELETE FROM result_business");
  }

  @Test
  void aHandlersResultIsStoredWithItsCompletionAndReadThroughTheJobView() throws Exception {
    List<Long> ids = JobFixtures.in(db).enqueue("results", 2);
    var events = new RecordingEvents();
    run(new CapsuleConfig("r", List.of("results"), 1), events, ids.get(0), "{\"total\": 42}");
    events.awaitFinished(Outcome.Kind.COMPLETE, 2, Duration.ofSeconds(20));

    assertThat(view(ids.get(0)).state().sqlName()).isEqualTo("completed");
    assertThat(view(ids.get(0)).result()).isEqualTo("{\"total\": 42}");
    assertThat(view(ids.get(0)).withoutPayload().result()).isNull();
    assertThat(view(ids.get(1)).state().sqlName()).isEqualTo("completed");
    assertThat(view(ids.get(1)).result()).isNull();
  }

  @Test
  void jobsWithResultsInABatchedTransactionCompleteSinglyBesideTheResultlessOnes()
      throws Exception {
    List<Long> ids = JobFixtures.in(db).enqueue("results_many", 10);
    var events = new RecordingEvents();
    run(new CapsuleConfig("m", List.of("results_many"), 1, 10), events, ids.get(3), "[1, 2]");
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(20));

    assertThat(db.jobCount("results_many", "completed")).isEqualTo(ids.size());
    assertThat(view(ids.get(3)).result()).isEqualTo("[1, 2]");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE result IS NOT NULL"))
        .isEqualTo(1);
  }

  @Test
  void anOversizedResultFailsTheAttemptNamingTheLimitAndWritesNothing() throws Exception {
    List<Long> ids = JobFixtures.in(db).enqueue("results_big", 1);
    long id = ids.get(0);
    String big = "\"" + "x".repeat(Outcome.MAX_RESULT_BYTES) + "\"";
    var events = new RecordingEvents();
    run(new CapsuleConfig("b", List.of("results_big"), 1), events, id, big);
    events.awaitFinished(Outcome.Kind.RETRY, 1, Duration.ofSeconds(20));

    assertThat(db.job(id).state()).isEqualTo("retryable");
    assertThat(db.job(id).errors().get(0).error())
        .contains("65538 bytes of JSON, over the limit of 65536 bytes (64 KiB");
    assertThat(view(id).result()).isNull();
    assertThat(db.queryLong("SELECT count(*) FROM result_business")).isZero();
  }

  @Test
  void theDatabaseRefusesAnOversizedResultToo() throws Exception {
    JobFixtures.in(db).enqueue("results_sql", 1);
    try (Connection c = db.connect()) {
      ClaimedJob job =
          store.jobClaim(c, List.of("results_sql"), 1, "w", Duration.ofMinutes(1)).get(0);
      String big = "\"" + "x".repeat(Outcome.MAX_RESULT_BYTES) + "\"";
      assertThatThrownBy(() -> store.jobCompleteWithResult(c, job, big))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("job_result_size_chk");
      assertThat(db.job(job.id()).state()).isEqualTo("running");
    }
  }

  @Test
  void aRolledBackCompletionLeavesNoResult() throws Exception {
    JobFixtures.in(db).enqueue("results_rollback", 1);
    long id;
    try (Connection c = db.connect()) {
      ClaimedJob job =
          store.jobClaim(c, List.of("results_rollback"), 1, "w", Duration.ofMinutes(1)).get(0);
      id = job.id();
      c.setAutoCommit(false);
      assertThat(store.jobCompleteWithResult(c, job, "{\"ok\": true}")).isTrue();
      c.rollback();
    }
    assertThat(db.job(id).state()).isEqualTo("running");
    assertThat(view(id).result()).isNull();
  }

  @Test
  void aResultObjectNeedsTheJakartaRuntimeToMapIt() {
    ClaimedJob job = ClaimedJobs.claimed(7, "q");
    assertThatThrownBy(() -> JobRunner.resultJson(job, Outcome.complete(List.of(1))))
        .hasMessageContaining("return Outcome.completeJson(json)");
    assertThat(JobRunner.resultJson(job, Outcome.completeJson("1"))).isEqualTo("1");
  }

  private JobView view(long id) throws SQLException {
    try (Connection c = db.connect()) {
      return admin.jobView(c, id).orElseThrow();
    }
  }

  private void run(CapsuleConfig capsule, RecordingEvents events, long withResult, String json) {
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .retry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(2), 0))
                    .capsule(capsule)
                    .build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  try (PreparedStatement ps =
                      tx.prepareStatement("INSERT INTO result_business VALUES (?)")) {
                    ps.setLong(1, job.id());
                    ps.executeUpdate();
                  }
                  if (job.id() != withResult) {
                    return Outcome.complete();
                  }
                  return Outcome.completeJson(json);
                }));
  }
}

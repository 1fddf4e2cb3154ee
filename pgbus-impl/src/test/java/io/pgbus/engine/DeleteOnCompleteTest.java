package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With a completed-job retention of zero, completing a job deletes it in the job's own transaction:
 * the business writes still commit with it, the fence still holds, and jobs that did not complete
 * stay.
 */
class DeleteOnCompleteTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint PRIMARY KEY)");
    db.update("DELETE FROM business");
  }

  @Test
  void aCompletedJobIsDeletedAndItsWritesCommitWithTheDeletion() {
    List<Long> ids = JobFixtures.in(db).enqueue("gone", 3);
    long failing = ids.get(1);
    var events = new RecordingEvents();
    run(new CapsuleConfig("g", List.of("gone"), 2), events, failing);
    events.awaitFinished(Outcome.Kind.COMPLETE, 2, Duration.ofSeconds(20));
    events.awaitFinished(Outcome.Kind.RETRY, 1, Duration.ofSeconds(20));

    assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(failing);
    assertThat(db.job(failing).state()).isEqualTo("retryable");
    assertThat(db.queryLongs("SELECT job_id FROM business ORDER BY job_id"))
        .containsExactly(ids.get(0), ids.get(2));
  }

  @Test
  void severalJobsInOneTransactionAreDeletedInOneStatement() {
    List<Long> ids = JobFixtures.in(db).enqueue("gone_many", 20);
    var events = new RecordingEvents();
    run(new CapsuleConfig("m", List.of("gone_many"), 2, 10), events, -1);
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(20));

    assertThat(db.jobCount()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM business")).isEqualTo(ids.size());
  }

  @Test
  void theDeletionIsFencedLikeTheCompletion() throws Exception {
    var store = new JobStore();
    JobFixtures.in(db).enqueue("gone_fenced", 2);
    try (Connection c = db.connect()) {
      List<ClaimedJob> held =
          store.jobClaim(c, List.of("gone_fenced"), 2, "w", Duration.ofMinutes(1));
      ClaimedJob a = held.get(0);
      ClaimedJob stale = ClaimedJobs.nextAttempt(a);

      assertThat(store.jobComplete(c, stale, true)).isFalse();
      assertThat(store.jobCompleteMany(c, List.of(stale), true)).isZero();
      assertThat(db.jobCount()).isEqualTo(2);
      assertThat(store.jobComplete(c, a, true)).isTrue();
      assertThat(store.jobCompleteMany(c, List.of(held.get(1)), true)).isEqualTo(1);
    }
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void zeroIsAllowedOnlyForCompletedJobs() {
    assertThat(
            EngineConfig.builder()
                .completedRetention(Duration.ZERO)
                .build()
                .retention()
                .deletesCompleted())
        .isTrue();
    assertThat(EngineConfig.builder().build().retention().deletesCompleted()).isFalse();
    assertThatThrownBy(
            () -> EngineConfig.builder().completedRetention(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("pgbus.retention.completed must not be negative");
    assertThatThrownBy(() -> EngineConfig.builder().deadRetention(Duration.ZERO).build())
        .hasMessageContaining("pgbus.retention.dead must be positive");
  }

  private void run(CapsuleConfig capsule, RecordingEvents events, long failing) {
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .completedRetention(Duration.ZERO)
                    .retry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(2), 0))
                    .capsule(capsule)
                    .build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  try (PreparedStatement ps =
                      tx.prepareStatement("INSERT INTO business VALUES (?)")) {
                    ps.setLong(1, job.id());
                    ps.executeUpdate();
                  }
                  if (job.id() == failing) {
                    throw new IllegalStateException("job " + failing + " fails");
                  }
                  return Outcome.complete();
                }));
  }
}

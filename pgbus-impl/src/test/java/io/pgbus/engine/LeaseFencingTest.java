package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.RecordingEvents.Finished;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker whose lease expired and whose job was rescued and claimed again elsewhere can no longer
 * change the job: every state change is fenced on (id, attempt, running), and through the engine
 * its business writes roll back with the refused completion.
 */
class LeaseFencingTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration SHORT_LEASE = Duration.ofMillis(200);

  private final JobStore store = new JobStore();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update(
        "CREATE TABLE IF NOT EXISTS business (job_id bigint, attempt int, worker text NOT NULL)");
    db.update("DELETE FROM business");
  }

  @Test
  void aRescuedAndReclaimedJobRefusesEveryChangeFromItsFormerHolder() throws Exception {
    long id = JobFixtures.in(db).enqueue("fenced");
    try (Connection c = db.connect()) {
      ClaimedJob a = store.jobClaim(c, List.of("fenced"), 1, "worker-a", SHORT_LEASE).get(0);
      assertThat(a.attempt()).isEqualTo(1);

      rescueOnceExpired(c);
      ClaimedJob b =
          store.jobClaim(c, List.of("fenced"), 1, "worker-b", Duration.ofMinutes(5)).get(0);

      assertThat(b.id()).isEqualTo(id);
      assertThat(b.attempt()).isEqualTo(2);
      assertThat(store.jobComplete(c, a)).as("A completes").isFalse();
      assertThat(store.jobFail(c, a, "late failure", Duration.ofSeconds(1))).as("A fails").isNull();
      assertThat(store.jobSnooze(c, a, Duration.ofSeconds(1))).as("A snoozes").isNull();
      assertThat(store.jobCancelRunning(c, a, "late cancel")).as("A cancels").isFalse();
      assertThat(store.jobRelease(c, a)).as("A releases").isFalse();
      JobRow held = db.job(id);
      assertThat(held.state()).isEqualTo("running");
      assertThat(held.attemptedBy()).isEqualTo("worker-b");

      assertThat(store.jobComplete(c, b)).as("B completes").isTrue();
    }
    JobRow done = db.job(id);
    assertThat(done.state()).isEqualTo("completed");
    assertThat(done.attempt()).isEqualTo(2);
    assertThat(done.errors())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.attempt()).isEqualTo(1);
              assertThat(e.error()).contains("lease expired", "worker-a");
            });
  }

  @Test
  void theFormerHoldersBusinessWritesRollBackWhenItsCompletionIsRefused() throws Exception {
    long id = JobFixtures.in(db).enqueue("fenced_engine");
    var aStarted = new CountDownLatch(1);
    var aMayFinish = new CountDownLatch(1);
    var eventsA = new RecordingEvents();
    var eventsB = new RecordingEvents();

    // Worker A: one slot, a short lease, no rescuer of its own. It writes, then stalls, ignoring
    // the job timeout's interrupt: only such a handler outlives its lease.
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .workerId("worker-a")
                    .lease(SHORT_LEASE)
                    .capsule("a", 1, "fenced_engine")
                    .build())
            .maintenance(false)
            .events(eventsA)
            .jobs(
                (job, tx) -> {
                  writeBusinessRow(tx, job, "worker-a");
                  aStarted.countDown();
                  assertThat(awaitIgnoringInterrupts(aMayFinish)).isTrue();
                  return Outcome.complete();
                }));
    assertThat(aStarted.await(10, TimeUnit.SECONDS)).as("A started").isTrue();

    try (Connection c = db.connect()) {
      rescueOnceExpired(c);
    }
    // Worker B claims the rescued job (attempt 2) and completes it normally.
    engines.start(
        engines
            .builder(engines.config().workerId("worker-b").capsule("b", 1, "fenced_engine").build())
            .maintenance(false)
            .events(eventsB)
            .jobs(
                (job, tx) -> {
                  writeBusinessRow(tx, job, "worker-b");
                  return Outcome.complete();
                }));
    assertThat(eventsB.awaitFinished(id, 2, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);

    aMayFinish.countDown();
    Finished a = eventsA.awaitFinished(id, 1, Duration.ofSeconds(10));

    assertThat(a.kind()).as("what A's attempt became: a lost lease").isNull();
    assertThat(db.queryLongs("SELECT attempt FROM business WHERE job_id = ?", id))
        .as("business rows that committed")
        .containsExactly(2L);
    assertThat(db.queryLong("SELECT count(*) FROM business WHERE worker = 'worker-a'")).isZero();
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("completed");
    assertThat(row.attempt()).isEqualTo(2);
    assertThat(row.attemptedBy()).isEqualTo("worker-b");
  }

  private void rescueOnceExpired(Connection c) {
    Await.until(
        "the short lease to expire and be rescued",
        Duration.ofSeconds(10),
        () -> store.jobRescueExpired(c, 10).values().stream().mapToLong(Long::longValue).sum(),
        n -> n == 1);
  }

  private static boolean awaitIgnoringInterrupts(CountDownLatch latch) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return latch.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException ignored) {
        // the job timeout; this handler stalls on regardless
      }
    }
  }

  private static void writeBusinessRow(Connection tx, RunningJob job, String worker)
      throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO business VALUES (?, ?, ?)")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setString(3, worker);
      ps.executeUpdate();
    }
  }
}

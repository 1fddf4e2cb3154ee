package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.JobRow.JobError;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Handlers that never finish well: one that hangs is interrupted at the job timeout, its writes
 * roll back and its error says it timed out; one that throws forever is retried with growing
 * backoff until it is dead; one that ignores the interrupt is left to its lease, rescued, run again
 * elsewhere, and its late result is refused by the fence.
 */
class JobTimeoutTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration TIMEOUT = Duration.ofMillis(300);
  private static final Duration BASE = Duration.ofMillis(200);
  private static final RetryPolicy BACKOFF = new RetryPolicy(BASE, Duration.ofSeconds(2), 0);
  private static final Duration WAIT = Duration.ofSeconds(20);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint, attempt int)");
    db.update("DELETE FROM business");
  }

  @Test
  void aHangingHandlerIsInterruptedAtItsTimeoutRolledBackAndRetriedWithBackoffUntilDead() {
    var interruptedOnEntry = new CopyOnWriteArrayList<Boolean>();
    start(
        (job, tx) -> {
          interruptedOnEntry.add(Thread.currentThread().isInterrupted());
          write(tx, job);
          Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // hangs; the interrupt ends it
          return Outcome.complete();
        });

    long enqueued = System.nanoTime();
    long id = jobs.enqueue("hanging", EnqueueOptions.defaults().withMaxAttempts(3));
    assertThat(events.awaitFinished(id, 3, WAIT).kind()).as("dead").isNull();
    Duration toDead = Measurements.since(enqueued);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.errors()).extracting(JobError::attempt).containsExactly(3, 2, 1);
    assertThat(row.errors())
        .allSatisfy(
            e ->
                assertThat(e.error())
                    .contains("timed out after " + TIMEOUT, "pgbus.job-timeout", "rolled back")
                    .contains("InterruptedException"));
    assertThat(db.queryLong("SELECT count(*) FROM business")).as("writes that committed").isZero();
    assertBackoffBetweenAttempts(row, TIMEOUT);
    assertThat(interruptedOnEntry)
        .as("a handler found its thread interrupted on entry")
        .containsOnly(false);
    Measurements.record(
        "job timeout 300 ms, 3 attempts, backoff 200/400 ms: enqueue -> dead", toDead);
  }

  @Test
  void aHandlerThatSwallowsTheInterruptAndReturnsStillFailsAsTimedOut() {
    start(
        (job, tx) -> {
          write(tx, job);
          try {
            Thread.sleep(TimeUnit.MINUTES.toMillis(1));
          } catch (InterruptedException swallowed) {
            // a handler that pretends nothing happened
          }
          return Outcome.complete();
        });

    long id = jobs.enqueue("swallowing", EnqueueOptions.defaults().withMaxAttempts(1));
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).as("dead").isNull();

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("timed out after " + TIMEOUT));
    assertThat(db.queryLong("SELECT count(*) FROM business")).isZero();
  }

  @Test
  void aHandlerThatThrowsForeverIsRetriedWithGrowingBackoffUntilDead() {
    start(
        (job, tx) -> {
          write(tx, job);
          throw new IllegalStateException("upstream refused attempt " + job.attempt());
        });

    long enqueued = System.nanoTime();
    long id = jobs.enqueue("throwing", EnqueueOptions.defaults().withMaxAttempts(4));
    assertThat(events.awaitFinished(id, 4, WAIT).kind()).as("dead").isNull();
    Duration toDead = Measurements.since(enqueued);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.finalizedAt()).isNotNull();
    assertThat(row.errors()).extracting(JobError::attempt).containsExactly(4, 3, 2, 1);
    assertThat(row.errors().get(0).error())
        .contains("IllegalStateException", "upstream refused attempt 4");
    assertThat(db.queryLong("SELECT count(*) FROM business")).isZero();
    assertBackoffBetweenAttempts(row, Duration.ZERO);
    Measurements.record(
        "throwing handler, 4 attempts, backoff 200/400/800 ms: enqueue -> dead", toDead);
  }

  @Test
  void aHandlerThatIgnoresTheInterruptIsRescuedAfterItsLeaseAndItsLateResultIsRefused()
      throws Exception {
    var stuck = new CountDownLatch(1);
    var release = new CountDownLatch(1);
    Duration lease = Duration.ofSeconds(1);
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .capsule("main", 2, "ignoring")
                    .jobTimeout(Duration.ofMillis(200))
                    .lease(lease)
                    .rescueInterval(Duration.ofMillis(100))
                    .leaderTtl(Duration.ofSeconds(1))
                    .retry(BACKOFF)
                    .build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  write(tx, job);
                  if (job.attempt() == 1) {
                    stuck.countDown();
                    awaitIgnoringInterrupts(release);
                  }
                  return Outcome.complete();
                }));

    long id = jobs.enqueue("ignoring");
    assertThat(stuck.await(10, TimeUnit.SECONDS)).as("attempt 1 runs").isTrue();
    long started = System.nanoTime();
    try {
      assertThat(events.awaitFinished(id, 2, WAIT).kind())
          .as("attempt 2, after rescue")
          .isEqualTo(Outcome.Kind.COMPLETE);
    } finally {
      release.countDown();
    }
    Duration toSecondAttemptDone = Measurements.since(started);
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).as("the stuck attempt's end").isNull();

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("completed");
    assertThat(row.attempt()).isEqualTo(2);
    assertThat(row.errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("lease expired"));
    assertThat(db.queryLongs("SELECT attempt FROM business WHERE job_id = ?", id))
        .as("committed writes: only the second attempt's")
        .containsExactly(2L);
    Measurements.record(
        "interrupt ignored (timeout 200 ms, lease 1 s): attempt 1 -> attempt 2 done",
        toSecondAttemptDone);
  }

  @Test
  void aHandlerInsideASqlStatementIsStoppedAtItsTimeoutNotWhenTheStatementEnds() {
    start(
        (job, tx) -> {
          write(tx, job);
          try (PreparedStatement ps = tx.prepareStatement("SELECT pg_sleep(10)")) {
            ps.execute(); // an interrupt alone does not end it
          }
          return Outcome.complete();
        },
        // Long enough for the handler to be inside pg_sleep on a busy machine: a cancel that
        // comes between two statements finds nothing to cancel.
        Duration.ofSeconds(1));

    long enqueued = System.nanoTime();
    long id = jobs.enqueue("hanging", EnqueueOptions.defaults().withMaxAttempts(1));
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).as("dead").isNull();
    Duration toDead = Measurements.since(enqueued);

    assertThat(toDead).as("timeout 1 s, statement 10 s").isLessThan(Duration.ofSeconds(3));
    assertThat(db.job(id).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("timed out after PT1S"));
    assertThat(db.queryLong("SELECT count(*) FROM business")).as("writes that committed").isZero();
    Measurements.record("timeout 1 s inside pg_sleep(10): enqueue -> dead", toDead);
  }

  private void start(JobFunction handler) {
    start(handler, TIMEOUT);
  }

  private void start(JobFunction handler, Duration timeout) {
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .capsule("main", 2, "hanging", "swallowing", "throwing")
                    .jobTimeout(timeout)
                    .retry(BACKOFF)
                    .build())
            .events(events)
            .jobs(handler));
  }

  /**
   * Each retry came at least one backoff after the failure before it: attempt n + 1 failed no
   * sooner than backoff(n) + the time the attempt itself took.
   */
  private static void assertBackoffBetweenAttempts(JobRow row, Duration attemptTakes) {
    var oldestFirst = new java.util.ArrayList<>(row.errors());
    java.util.Collections.reverse(oldestFirst);
    for (int i = 1; i < oldestFirst.size(); i++) {
      Duration gap = Duration.between(oldestFirst.get(i - 1).at(), oldestFirst.get(i).at());
      Duration backoff = BACKOFF.backoff(oldestFirst.get(i - 1).attempt());
      assertThat(gap)
          .as("from failure %d to failure %d", i, i + 1)
          .isGreaterThanOrEqualTo(backoff.plus(attemptTakes).minusMillis(20));
      Measurements.record(
          "retry gap after failed attempt " + i + " (backoff " + backoff.toMillis() + " ms)", gap);
    }
  }

  private static void write(Connection tx, RunningJob job) throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO business VALUES (?, ?)")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.executeUpdate();
    }
  }

  private static void awaitIgnoringInterrupts(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        if (latch.await(30, TimeUnit.SECONDS)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true; // ignored on purpose, but kept for whoever runs next on this thread
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}

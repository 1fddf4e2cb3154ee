package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A retry starts when it falls due, not at the next poll (issue #29, item 6): within its backoff
 * and a second, whether the engine that failed it is busy (another engine takes it) or idle (its
 * own capsule's alarm), with the poll ceiling at its default minute.
 */
class RetryWakeTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration BACKOFF = Duration.ofSeconds(2);
  private static final Duration BOUND = BACKOFF.plusSeconds(1);
  private static final RetryPolicy EXACT = new RetryPolicy(BACKOFF, BACKOFF, 0);

  private final JobFixtures jobs = JobFixtures.in(db);
  private final CountDownLatch release = new CountDownLatch(1); // ends the blocking handlers
  private final Map<Long, Instant> secondStart = new ConcurrentHashMap<>();
  private final Map<Long, String> secondEngine = new ConcurrentHashMap<>();

  @AfterEach
  void releaseBlockedHandlers() {
    release.countDown();
  }

  @Test
  void aRetryFallingDueWhileItsEngineIsBusyStartsOnAnIdleEngineWithinASecond() {
    // Each engine reads its own blocker queue first, then the shared one. The engine that fails the
    // job fills its only slot with a blocker before its failure commits, so when the retry falls
    // due only the other engine, which never saw the job fail, can take it.
    for (String name : new String[] {"a", "b"}) {
      String blockers = "retry_busy_blocker_" + name;
      TestEngines.awaitDelivering(
          engines.start(
              engines.config().retry(EXACT).capsule("c", 1, blockers, "retry_busy").build(),
              (job, tx) -> {
                if (job.queue().equals(blockers)) {
                  release.await();
                } else if (job.attempt() == 1) {
                  jobs.enqueue(blockers);
                  throw new IllegalStateException("fails once, on engine " + name);
                } else {
                  secondEngine.put(job.id(), name);
                  secondStart.put(job.id(), Instant.now());
                }
                return Outcome.complete();
              }));
    }

    long id = jobs.enqueue("retry_busy");

    Duration late = awaitSecondAttempt(id);
    assertThat(db.job(id).errors().get(0).error())
        .as("the second attempt ran on the engine that did not fail the first")
        .doesNotContain("engine " + secondEngine.get(id));
    assertThat(late).as("from the failure to the retry's start").isLessThanOrEqualTo(BOUND);
  }

  @Test
  void aRetryFoldedIntoALaterAlarmOfItsIdleEngineStillStartsWithinASecond() {
    // One slot. The first job fails: its retry is the capsule's alarm. A second job, scheduled 1.5
    // s
    // later, rings the alarm before that and fills the slot; its own retry then re-arms the alarm,
    // and the first retry, folded into the earlier alarm, must still be read before the next poll.
    TestEngines.awaitDelivering(
        engines.start(
            engines.config().retry(EXACT).capsule("c", 1, "retry_idle").build(),
            (job, tx) -> {
              if (job.attempt() == 1) {
                throw new IllegalStateException("fails once");
              }
              secondStart.put(job.id(), Instant.now());
              return Outcome.complete();
            }));

    long first = jobs.enqueue("retry_idle");
    Await.until(
        "the first job's failure",
        Duration.ofSeconds(20),
        () -> db.job(first).state(),
        "retryable"::equals);
    Instant failed = db.job(first).errors().get(0).at();
    long second =
        jobs.enqueue("retry_idle", EnqueueOptions.defaults().withRunAt(failed.plusMillis(1_500)));

    assertThat(awaitSecondAttempt(first)).as("the first retry's start").isLessThanOrEqualTo(BOUND);
    assertThat(awaitSecondAttempt(second))
        .as("the second retry's start")
        .isLessThanOrEqualTo(BOUND);
  }

  /** Waits for the job's second attempt; returns the time from its first failure to its start. */
  private Duration awaitSecondAttempt(long id) {
    // Longer than the bound, shorter than the poll ceiling: a retry left to the poll shows late.
    Await.until(
        "job " + id + "'s second attempt",
        Duration.ofSeconds(20),
        () -> secondStart.get(id),
        java.util.Objects::nonNull);
    Instant failed = db.job(id).errors().get(0).at();
    return Duration.between(failed, secondStart.get(id));
  }
}

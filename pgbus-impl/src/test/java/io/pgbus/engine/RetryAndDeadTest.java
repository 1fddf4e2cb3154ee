package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.JobRow.JobError;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What each outcome does to a job: a failure retries with backoff until the attempts are spent and
 * the job is dead (keeping its last ten errors), a snooze gives the attempt back, a cancel ends the
 * job, and a replay revives a dead one.
 */
class RetryAndDeadTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final RetryPolicy QUICK =
      new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), 0);
  private static final Duration LEASE = Duration.ofMinutes(1);

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);
  private final RecordingEvents events = new RecordingEvents();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint, note text)");
    db.update("DELETE FROM business");
  }

  @Test
  void aJobThatAlwaysFailsIsDeadAfterMaxAttemptsKeepingItsLastTenErrorsNewestFirst() {
    var attempts = new CopyOnWriteArrayList<Integer>();
    start(
        QUICK,
        (job, tx) -> {
          attempts.add(job.attempt());
          throw new IllegalStateException("boom on attempt " + job.attempt());
        });

    long id = jobs.enqueue("failing", EnqueueOptions.defaults().withMaxAttempts(12));
    assertThat(events.awaitFinished(id, 12, WAIT).kind()).as("dead").isNull();

    assertThat(attempts).containsExactlyElementsOf(IntStream.rangeClosed(1, 12).boxed().toList());
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.attempt()).isEqualTo(12);
    assertThat(row.finalizedAt()).isNotNull();
    assertThat(row.leaseExpiresAt()).isNull();
    assertThat(row.errors()).hasSize(10);
    assertThat(row.errors())
        .extracting(JobError::attempt)
        .containsExactly(12, 11, 10, 9, 8, 7, 6, 5, 4, 3);
    assertThat(row.errors().get(0).error()).contains("IllegalStateException", "boom on attempt 12");
  }

  @Test
  void aFailedAttemptIsRetriedAfterRoughlyTheBackoff() {
    start(
        new RetryPolicy(Duration.ofMinutes(10), Duration.ofHours(1), 0.2),
        (job, tx) -> {
          throw new IllegalArgumentException("not yet");
        });

    long id = jobs.enqueue("backoff");
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.RETRY);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("retryable");
    assertThat(row.finalizedAt()).isNull();
    Duration wait = Duration.between(row.errors().get(0).at(), row.runAt());
    assertThat(wait).isBetween(Duration.ofMinutes(8), Duration.ofMinutes(12));
  }

  @Test
  void aFailureRecordedByTheStoreSchedulesTheRetryExactlyOneBackoffLater() throws Exception {
    long id = jobs.enqueue("store_fail");
    try (Connection c = db.connect()) {
      ClaimedJob job = store.jobClaim(c, List.of("store_fail"), 1, "w", LEASE).get(0);

      JobStore.FailResult result = store.jobFail(c, job, "it broke", Duration.ofSeconds(90));

      assertThat(result.dead()).isFalse();
      JobRow row = db.job(id);
      assertThat(result.retryAt()).isEqualTo(row.runAt());
      assertThat(Duration.between(row.errors().get(0).at(), row.runAt()))
          .isEqualTo(Duration.ofSeconds(90));
      assertThat(row.errors())
          .singleElement()
          .isEqualTo(new JobError(1, row.errors().get(0).at(), "it broke"));
    }
  }

  @Test
  void aSnoozeDoesNotSpendAnAttempt() {
    start(QUICK, (job, tx) -> Outcome.snooze(Duration.ofMinutes(10)));

    long id = jobs.enqueue("snoozing", EnqueueOptions.defaults().withMaxAttempts(1));
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.SNOOZE);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("scheduled");
    assertThat(row.attempt()).isZero();
    assertThat(row.errors()).isEmpty();
    assertThat(Duration.between(row.dbNow(), row.runAt()))
        .isBetween(Duration.ofMinutes(9), Duration.ofMinutes(10));
  }

  @Test
  void aSnoozedJobRunsAgainWithTheSameAttemptNumber() {
    var seen = new CopyOnWriteArrayList<Integer>();
    start(
        QUICK,
        (job, tx) -> {
          seen.add(job.attempt());
          return seen.size() == 1 ? Outcome.snooze(Duration.ofMillis(100)) : Outcome.complete();
        });

    long id = jobs.enqueue("snooze_then_run", EnqueueOptions.defaults().withMaxAttempts(1));
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.SNOOZE);
    events.awaitFinished(Outcome.Kind.COMPLETE, 1, WAIT);

    assertThat(seen).containsExactly(1, 1);
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("completed");
    assertThat(row.attempt()).isEqualTo(1);
  }

  @Test
  void aCancelEndsTheJobForGood() {
    start(QUICK, (job, tx) -> Outcome.cancel("customer closed the account"));

    long id = jobs.enqueue("cancelling");
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.CANCEL);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("cancelled");
    assertThat(row.finalizedAt()).isNotNull();
    assertThat(row.errors())
        .singleElement()
        .extracting(JobError::error)
        .isEqualTo("cancelled: customer closed the account");
  }

  @Test
  void aRetryOutcomeKeepsTheBusinessWritesAndSchedulesARetry() {
    start(
        new RetryPolicy(Duration.ofMinutes(1), Duration.ofMinutes(1), 0),
        (job, tx) -> {
          writeBusinessRow(tx, job, "partial");
          return Outcome.retry("upstream said 503");
        });

    long id = jobs.enqueue("retrying");
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.RETRY);

    assertThat(db.queryLong("SELECT count(*) FROM business WHERE job_id = ?", id)).isEqualTo(1);
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("retryable");
    assertThat(row.errors())
        .singleElement()
        .extracting(JobError::error)
        .isEqualTo("upstream said 503");
  }

  @Test
  void aThrowingHandlersBusinessWritesRollBack() {
    start(
        QUICK,
        (job, tx) -> {
          writeBusinessRow(tx, job, "lost");
          throw new IllegalStateException("after writing");
        });

    long id = jobs.enqueue("throwing", EnqueueOptions.defaults().withMaxAttempts(1));
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isNull();

    assertThat(db.queryLong("SELECT count(*) FROM business")).isZero();
    assertThat(db.job(id).state()).isEqualTo("dead");
  }

  @Test
  void aReplayRevivesADeadJobWithAFreshAttemptBudgetAndWakesItsQueue() throws Exception {
    long id = jobs.enqueue("replayed", EnqueueOptions.defaults().withMaxAttempts(1));
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    try (Connection c = db.connect();
        NotificationListener listener = db.listen("replayed")) {
      ClaimedJob job = store.jobClaim(c, List.of("replayed"), 1, "w", LEASE).get(0);
      assertThat(store.jobFail(c, job, "gave up", Duration.ofSeconds(1)).dead()).isTrue();
      listener.untilBarrier(); // forget the enqueue's wake

      assertThat(engine.jobs().replay(c, id)).isTrue();

      JobRow row = db.job(id);
      assertThat(row.state()).isEqualTo("available");
      // The attempt counter never goes back (it is the fence); the budget is renewed instead.
      assertThat(row.attempt()).isEqualTo(1);
      assertThat(row.finalizedAt()).isNull();
      assertThat(row.errors()).extracting(JobError::error).containsExactly("gave up");
      assertThat(listener.next("replayed", Duration.ofSeconds(5))).isNotNull();
      assertThat(engine.jobs().replay(c, id)).as("replaying a job that is not dead").isFalse();
      ClaimedJob revived = store.jobClaim(c, List.of("replayed"), 1, "w", LEASE).get(0);
      assertThat(revived.attempt()).isEqualTo(2);
      assertThat(revived.maxAttempts()).isEqualTo(2);
      assertThat(store.jobComplete(c, job))
          .as("the worker of the dead attempt cannot settle the revived job")
          .isFalse();
      assertThat(store.jobComplete(c, revived)).isTrue();
    }
  }

  @Test
  void aReplayGivesTheEnqueuedBudgetAgainAndTheBackoffStartsFromItsFirstStep() throws Exception {
    long id = jobs.enqueue("replay_fresh", EnqueueOptions.defaults().withMaxAttempts(2));
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    try (Connection c = db.connect()) {
      for (int i = 0; i < 2; i++) {
        db.update("UPDATE pgbus.job SET run_at = now() WHERE id = " + id);
        ClaimedJob job = store.jobClaim(c, List.of("replay_fresh"), 1, "w", LEASE).get(0);
        store.jobFail(c, job, "failed " + job.attempt(), Duration.ofSeconds(1));
      }
      assertThat(db.job(id).state()).isEqualTo("dead");
      assertThat(engine.jobs().replay(c, id)).isTrue();
    }
    // Two attempts spent before, two again now: "attempt 1 of 2" of this run.
    assertThat(db.queryLong("SELECT attempt_base FROM pgbus.job WHERE id = ?", id)).isEqualTo(2);
    assertThat(db.queryLong("SELECT max_attempts FROM pgbus.job WHERE id = ?", id)).isEqualTo(4);
    try (Connection c = db.connect()) {
      var view = new JobAdminStore().jobView(c, id).orElseThrow();
      assertThat(view.attemptsBeforeReplay()).isEqualTo(2);
      assertThat(view.maxAttempts() - view.attemptsBeforeReplay()).isEqualTo(2);
    }

    // Its first failure after the replay waits the first backoff (10 min), not the third (40).
    start(
        new RetryPolicy(Duration.ofMinutes(10), Duration.ofHours(10), 0),
        (job, tx) -> {
          throw new IllegalStateException("still failing");
        });
    events.awaitFinished(id, 3, WAIT);
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("retryable");
    assertThat(Duration.between(Instant.now(), row.runAt()))
        .isBetween(Duration.ofMinutes(9), Duration.ofMinutes(11));
  }

  @Test
  void aCancelStopsAWaitingJobAtOnceAndOnlyRecordsTheRequestForARunningOne() throws Exception {
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    long waiting =
        jobs.enqueue("cancel_api", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long running = jobs.enqueue("cancel_api");
    try (Connection c = db.connect()) {
      store.jobClaim(c, List.of("cancel_api"), 1, "w", LEASE);

      assertThat(engine.jobs().cancel(c, waiting)).isTrue();
      assertThat(engine.jobs().cancel(c, running)).as("a request to the JVM that runs it").isTrue();
      assertThat(engine.jobs().cancel(c, waiting)).as("cancelling twice").isFalse();
    }
    assertThat(db.job(waiting).state()).isEqualTo("cancelled");
    // Nobody runs it here: the request waits in the row, fenced on the running attempt.
    assertThat(db.job(running).state()).isEqualTo("running");
    assertThat(db.queryLong("SELECT cancel_attempt FROM pgbus.job WHERE id = ?", running))
        .isEqualTo(1);
  }

  private void start(RetryPolicy retry, JobFunction handler) {
    engines.start(
        engines
            .builder(engines.config().retry(retry).capsule("main", 2, queuesUsedHere()).build())
            .events(events)
            .jobs(handler));
  }

  private static void writeBusinessRow(Connection tx, RunningJob job, String note)
      throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO business VALUES (?, ?)")) {
      ps.setLong(1, job.id());
      ps.setString(2, note);
      ps.executeUpdate();
    }
  }

  private static String[] queuesUsedHere() {
    return new String[] {
      "failing",
      "backoff",
      "snoozing",
      "snooze_then_run",
      "cancelling",
      "retrying",
      "throwing",
      "replay_fresh"
    };
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A delayed job waits until its run_at: no claim takes it before, the next claim after does, and a
 * capsule that polls only every ten minutes still runs it on time, woken by the due-time hint.
 */
class DelayedJobTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** Far longer than any test here: a job that runs at all was not found by a poll. */
  private static final Duration NO_POLLING = Duration.ofMinutes(10);

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aDelayedJobIsNotClaimableBeforeItsRunAtAndIsAfter() throws Exception {
    long id = jobs.enqueue("delayed", EnqueueOptions.defaults().withDelay(Duration.ofMillis(1500)));
    assertThat(db.job(id).state()).isEqualTo("scheduled");

    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, List.of("delayed"), 10, "w", Duration.ofMinutes(1))).isEmpty();

      List<ClaimedJob> claimed =
          Await.until(
              "the delayed job to become claimable",
              Duration.ofSeconds(10),
              () -> store.jobClaim(c, List.of("delayed"), 10, "w", Duration.ofMinutes(1)),
              l -> !l.isEmpty());

      assertThat(claimed).extracting(ClaimedJob::id).containsExactly(id);
    }
    JobRow row = db.job(id);
    assertThat(row.attemptedAt()).as("claimed at (database clock)").isAfterOrEqualTo(row.runAt());
  }

  @Test
  void aBatchKeepsEachExactRunAtWhateverTheSessionTimeZone() throws Exception {
    Instant runAt = Instant.now().plus(Duration.ofHours(2)).truncatedTo(ChronoUnit.MICROS);
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    List<Long> ids;
    long single;
    try (Connection c = db.connect()) {
      // A pool's init SQL, or a DBA's ALTER ROLE, may give the session another zone than the JVM's.
      c.createStatement().execute("SET TIME ZONE 'Asia/Tokyo'");
      var options = EnqueueOptions.defaults().withRunAt(runAt);
      ids =
          engine
              .jobs()
              .enqueueAll(c, List.of(new NewJob("tz", "{}", options), NewJob.of("tz", "{}")));
      single = engine.jobs().enqueue(c, new NewJob("tz", "{}", options));
    }

    assertThat(db.job(single).runAt()).isEqualTo(runAt);
    assertThat(db.job(ids.get(0)).runAt()).isEqualTo(runAt);
    assertThat(db.job(ids.get(0)).state()).isEqualTo("scheduled");
    assertThat(db.job(ids.get(1)).state()).isEqualTo("available");
  }

  @Test
  void nextDueReportsTheEarliestDelayedJobOfTheGivenQueues() throws Exception {
    Instant base = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    jobs.enqueue("due_a", at(base.plus(Duration.ofMinutes(30))));
    long aSoonest = jobs.enqueue("due_a", at(base.plus(Duration.ofMinutes(10))));
    long bSoonest = jobs.enqueue("due_b", at(base.plus(Duration.ofMinutes(5))));
    jobs.enqueue("due_c"); // may run now: not a "next due" time

    try (Connection c = db.connect()) {
      assertThat(store.jobNextDue(c, List.of("due_a"))).isEqualTo(db.job(aSoonest).runAt());
      assertThat(store.jobNextDue(c, List.of("due_a", "due_b")))
          .isEqualTo(db.job(bSoonest).runAt());
      assertThat(store.jobNextDue(c, List.of("due_c"))).isNull();
      assertThat(store.jobNextDue(c, List.of("nothing_here"))).isNull();
    }
  }

  @Test
  void theHeadOfAQueueIsItsEarliestWaitingJobOverEveryPriorityLevel() throws Exception {
    // V40: the head is read from job_claim_idx one priority level at a time, so the earliest job
    // may sit at any level: here the middle one, behind a level with a later job on each side.
    Instant base = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    jobs.enqueue("levels", at(base.plus(Duration.ofMinutes(20))).withPriority(-5));
    long soonest = jobs.enqueue("levels", at(base.plus(Duration.ofMinutes(2))).withPriority(0));
    jobs.enqueue("levels", at(base.plus(Duration.ofMinutes(9))).withPriority(7));
    long due = jobs.enqueue("levels_due", EnqueueOptions.defaults().withPriority(3));
    long dueLater =
        jobs.enqueue("levels_due", at(base.plus(Duration.ofMinutes(4))).withPriority(-2));

    try (Connection c = db.connect()) {
      assertThat(store.jobNextDue(c, List.of("levels"))).isEqualTo(db.job(soonest).runAt());
      Map<String, JobStore.QueueHead> heads =
          store.jobQueueHeads(c, List.of("levels", "levels_due", "nothing_here"));
      assertThat(heads).containsOnlyKeys("levels", "levels_due");
      assertThat(heads.get("levels").runAt()).isEqualTo(db.job(soonest).runAt());
      assertThat(heads.get("levels").due()).isFalse();
      assertThat(heads.get("levels_due").runAt()).isEqualTo(db.job(due).runAt());
      assertThat(heads.get("levels_due").due()).isTrue();
      // The next due time passes over the available job: only delayed and retrying ones count.
      assertThat(store.jobNextDue(c, List.of("levels_due"))).isEqualTo(db.job(dueLater).runAt());
    }
  }

  @Test
  void aCapsuleThatBarelyPollsRunsADelayedJobWhenItIsDue() throws Exception {
    var events = new RecordingEvents();
    var startedAt = new ConcurrentHashMap<Long, Instant>();
    startListeningEngine(events, startedAt);

    long id = jobs.enqueue("later", EnqueueOptions.defaults().withDelay(Duration.ofSeconds(1)));
    events.awaitFinished(id, 1, Duration.ofSeconds(10));

    assertRanPromptlyAfterRunAt(id, startedAt);
  }

  @Test
  void aDueTimeBetweenTwoMillisecondsDoesNotMakeTheCapsuleWakeTooEarly() throws Exception {
    var events = new RecordingEvents();
    var startedAt = new ConcurrentHashMap<Long, Instant>();
    startListeningEngine(events, startedAt);

    // A run_at just short of the next millisecond: a hint rounded down would ring 0.999 ms early,
    // the claim would find nothing, and the job would wait for the ten-minute poll.
    Instant runAt = Instant.now().plusMillis(700).truncatedTo(ChronoUnit.MILLIS).plusNanos(999_000);
    long id = jobs.enqueue("later", EnqueueOptions.defaults().withRunAt(runAt));
    events.awaitFinished(id, 1, Duration.ofSeconds(10));

    assertRanPromptlyAfterRunAt(id, startedAt);
  }

  @Test
  void aHintThatRingsTooEarlyStillRunsTheJobWhenItIsDue() throws Exception {
    var events = new RecordingEvents();
    var startedAt = new ConcurrentHashMap<Long, Instant>();
    startListeningEngine(events, startedAt);

    // What a worker whose clock runs ahead of the database's sees: a hint that rings before the
    // job is due. The claim then finds nothing; the capsule must re-read the due time, not drop it.
    long id = jobs.enqueue("later", EnqueueOptions.defaults().withDelay(Duration.ofMillis(1500)));
    long dueMillis = db.job(id).runAt().toEpochMilli();
    db.queryLong(
        "SELECT count(*) FROM (SELECT pg_notify('pgbus_later', ?::text)) n",
        Long.toString(dueMillis - 1000));
    events.awaitFinished(id, 1, Duration.ofSeconds(10));

    assertRanPromptlyAfterRunAt(id, startedAt);
  }

  private static EnqueueOptions at(Instant runAt) {
    return EnqueueOptions.defaults().withRunAt(runAt);
  }

  private void startListeningEngine(RecordingEvents events, Map<Long, Instant> startedAt) {
    EngineConfig config =
        engines
            .config()
            .capsule("patient", 2, "later")
            .pollInterval(NO_POLLING)
            .pollCeiling(NO_POLLING)
            .build();
    Engine engine =
        engines.start(
            engines
                .builder(config)
                .events(events)
                .jobs(
                    (job, tx) -> {
                      startedAt.put(job.id(), Instant.now());
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(engine);
  }

  private void assertRanPromptlyAfterRunAt(long id, Map<Long, Instant> startedAt) {
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("completed");
    assertThat(row.attemptedAt()).as("claimed at").isAfterOrEqualTo(row.runAt());
    assertThat(Duration.between(row.runAt(), startedAt.get(id)))
        .as("delay between run_at and the handler starting")
        .isLessThan(Duration.ofSeconds(3));
  }
}

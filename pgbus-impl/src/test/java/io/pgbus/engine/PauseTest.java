package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Pause and resume: a paused queue's jobs wait in the database while other queues run, every engine
 * on the database sees the pause, nothing polls or claims in a loop meanwhile, and a resume wakes
 * the workers at once rather than at their next slow poll.
 */
class PauseTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration CEILING = Duration.ofSeconds(60);
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aPausedQueuesJobsAreNotClaimedWhileAnotherQueuesAre() {
    var events = new RecordingEvents();
    Engine engine = notifyingEngine(events, "held", "open");
    pause(engine, "held");

    long held = jobs.enqueue("held");
    long open = jobs.enqueue("open");
    events.awaitFinished(open, 1, WAIT);
    // The open job ran after the held one was enqueued, from the same capsule, whose queue list
    // puts "held" first: the claim that took it skipped the paused queue.
    assertThat(db.job(held).state()).isEqualTo("available");
    assertThat(events.started()).extracting(ClaimedJob::id).containsExactly(open);
  }

  @Test
  void anEnqueueIntoAPausedQueueIsKeptAndWakesNobody() throws Exception {
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    pause(engine, "silent");
    try (NotificationListener listener = db.listen("silent")) {
      long id = jobs.enqueue("silent");

      assertThat(db.job(id).state()).isEqualTo("available");
      assertThat(listener.untilBarrier()).isEmpty();
    }
  }

  @Test
  void aResumeWakesTheWorkersSoWaitingJobsRunPromptly() {
    var events = new RecordingEvents();
    Engine engine = notifyingEngine(events, "resumed");
    pause(engine, "resumed");
    List<Long> ids = jobs.enqueue("resumed", 3);

    long resumedAt = System.nanoTime();
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().resume(c, "resumed")).isTrue();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    for (long id : ids) {
      events.awaitFinished(id, 1, WAIT);
    }
    Duration took = Duration.ofNanos(System.nanoTime() - resumedAt);

    // Far below the 60 s poll ceiling: the resume's NOTIFY woke the capsule.
    assertThat(took).isLessThan(Duration.ofSeconds(3));
  }

  @Test
  void aPauseMadeThroughOneEngineHoldsForAnother() {
    var eventsA = new RecordingEvents();
    var eventsB = new RecordingEvents();
    Engine a = notifyingEngine(eventsA, "fleet");
    Engine b = notifyingEngine(eventsB, "fleet", "marker");
    pause(a, "fleet");

    long waiting = jobs.enqueue("fleet");
    long marker = jobs.enqueue("marker");
    eventsB.awaitFinished(marker, 1, WAIT);

    assertThat(db.job(waiting).state()).isEqualTo("available");
    try (Connection c = db.connect()) {
      assertThat(b.jobs().isPaused(c, "fleet")).isTrue();
      assertThat(b.jobs().resume(c, "fleet")).isTrue();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    Await.until(
        "the waiting job to run after the resume",
        WAIT,
        () -> db.job(waiting).state(),
        s -> s.equals("completed"));
  }

  @Test
  void nothingClaimsInALoopWhileAQueueWithDueJobsIsPaused() {
    // No listener: the ticker ticks every 50 ms, the fastest it ever goes.
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 2, "stalled")
                        .pollInterval(Duration.ofMillis(50))
                        .pollCeiling(Duration.ofMillis(50))
                        .build(),
                    db.dataSource())
                .jobs((job, tx) -> Outcome.complete()));
    pause(engine, "stalled");
    jobs.enqueue("stalled", 5);
    // A retryable job whose time has come: due times feed the capsule's alarm.
    db.update(
        "UPDATE pgbus.job SET state = 'retryable', run_at = now() - interval '1 second'"
            + " WHERE id = (SELECT min(id) FROM pgbus.job)");
    Capsule capsule = engine.capsules().get(0);
    long claimsBefore = capsule.status().claims();
    long pollsBefore = engine.status().ticks();

    Await.until("20 polls", WAIT, () -> engine.status().ticks(), n -> n >= pollsBefore + 20);

    // Its start-up claim at most: the polls found no head to wake it for.
    assertThat(capsule.status().claims() - claimsBefore).isLessThanOrEqualTo(1);
    assertThat(db.jobCount("stalled", "running")).isZero();
  }

  @Test
  void aRunningJobFinishesNormallyWhenItsQueueIsPaused() throws Exception {
    var events = new RecordingEvents();
    var release = new CountDownLatch(1);
    Engine engine =
        engines.start(
            engines
                .builder(engines.config().capsule("main", 1, "busy").build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
                      return Outcome.complete();
                    }));
    long id = jobs.enqueue("busy");
    Await.until("the job to start", WAIT, () -> events.started().size(), n -> n == 1);

    pause(engine, "busy");
    release.countDown();

    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(db.job(id).state()).isEqualTo("completed");
  }

  @Test
  void pauseAndResumeSayWhetherTheyChangedAnythingAndTheSqlFunctionsAgree() throws Exception {
    Engine engine =
        Engine.builder(EngineConfig.builder().workerId("ops:1").build(), db.dataSource()).build();
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().isPaused(c, "reports")).isFalse();
      assertThat(engine.jobs().pause(c, "reports")).isTrue();
      assertThat(engine.jobs().pause(c, "reports")).isFalse();
      assertThat(engine.jobs().isPaused(c, "reports")).isTrue();
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause WHERE paused_by = 'ops:1'"))
          .isEqualTo(1);
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause WHERE pgbus.pause('emails')"))
          .isEqualTo(1);
      assertThat(engine.jobs().pausedQueues(c)).containsExactly("emails", "reports");

      assertThat(engine.jobs().resume(c, "reports")).isTrue();
      assertThat(engine.jobs().resume(c, "reports")).isFalse();
      assertThat(db.queryLong("SELECT count(*) WHERE pgbus.resume('emails')")).isEqualTo(1);
      assertThat(engine.jobs().pausedQueues(c)).isEmpty();
    }
  }

  @Test
  void aBadQueueNameIsRefused() throws Exception {
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> engine.jobs().pause(c, "Bad Name"))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("invalid queue name 'Bad Name'");
    }
  }

  private Engine notifyingEngine(RecordingEvents events, String... queues) {
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("main", 2, queues)
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    return engine;
  }

  private static void pause(Engine engine, String queue) {
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().pause(c, queue)).isTrue();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stop is prompt when nothing runs, drains running handlers up to the drain timeout, and then
 * releases what still runs back to available without spending an attempt.
 */
class EngineStopTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void anIdleEngineWithoutMaintenanceStopsAtOnce() {
    Engine engine =
        engines.start(
            engines
                .builder(engines.config().capsule("main", 1, "idle").build())
                .maintenance(false)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);

    long started = System.nanoTime();
    assertThat(engine.stop()).as("jobs left running").isZero();

    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
    assertThat(engine.running()).isFalse();
    assertThat(engine.listenerState()).isEqualTo(ListenerState.STOPPED);
  }

  @Test
  void aStopReturnsAsSoonAsTheLastRunningJobFinishedNotAtTheEndOfTheDrain() throws Exception {
    var running = new CountDownLatch(1);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofSeconds(20))
                        .capsule("main", 1, "brief")
                        .build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      Thread.sleep(300);
                      return Outcome.complete();
                    }));
    long id = JobFixtures.in(db).enqueue("brief");
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    long stopping = System.nanoTime();
    assertThat(engine.stop()).as("slots busy after the drain").isZero();
    Duration stopTook = Duration.ofNanos(System.nanoTime() - stopping);

    assertThat(stopTook)
        .as("well before the 20 s drain ran out")
        .isLessThan(Duration.ofSeconds(10));
    assertThat(db.job(id).state()).isEqualTo("completed");
    Measurements.record("stop with one 300 ms job running (drain 20 s): stop() took", stopTook);
  }

  @Test
  void aStopLetsShortJobsFinishAndReleasesTheRestAfterTheDrainWithoutSpendingAnAttempt()
      throws Exception {
    db.update("CREATE TABLE IF NOT EXISTS drained (job_id bigint, attempt int)");
    var longRunning = new CountDownLatch(1);
    var release = new CountDownLatch(1);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofSeconds(3))
                        .capsule("main", 2, "short", "long")
                        .build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      try (var ps = tx.prepareStatement("INSERT INTO drained VALUES (?, ?)")) {
                        ps.setLong(1, job.id());
                        ps.setInt(2, job.attempt());
                        ps.executeUpdate();
                      }
                      if (job.queue().equals("long")) {
                        longRunning.countDown();
                        release.await(30, TimeUnit.SECONDS); // outlives the drain
                      } else {
                        Thread.sleep(200); // within the drain
                      }
                      return Outcome.complete();
                    }));
    long longJob = JobFixtures.in(db).enqueue("long");
    assertThat(longRunning.await(10, TimeUnit.SECONDS)).isTrue();
    long shortJob = JobFixtures.in(db).enqueue("short");
    Await.until(
        "the short job to run",
        Duration.ofSeconds(10),
        () -> db.job(shortJob).state(),
        s -> s.equals("running"));

    long stopping = System.nanoTime();
    int left;
    try {
      left = engine.stop();
    } finally {
      release.countDown();
    }
    Duration stopTook = Duration.ofNanos(System.nanoTime() - stopping);

    assertThat(left)
        .as(
            "slots busy after the drain; short job %s, finished %s",
            db.job(shortJob).state(), events.finished())
        .isEqualTo(1);
    assertThat(stopTook).isLessThan(Duration.ofSeconds(6));
    assertThat(db.job(shortJob).state()).as("finished within the drain").isEqualTo("completed");
    JobRow released = db.job(longJob);
    assertThat(released.state()).isEqualTo("available");
    assertThat(released.attempt()).as("the fence never goes back").isEqualTo(1);
    assertThat(released.maxAttempts()).as("the claimed attempt given back").isEqualTo(26);
    // Its handler, let go after the stop, cannot complete the released job: its writes roll back.
    assertThat(events.awaitFinished(longJob, 1, Duration.ofSeconds(10)).kind()).isNull();
    assertThat(db.job(longJob).state()).isEqualTo("available");
    assertThat(db.queryLong("SELECT count(*) FROM drained WHERE job_id = ?", longJob)).isZero();

    // Another engine runs it to its end, with a full budget.
    var next = new RecordingEvents();
    engines.start(
        engines
            .builder(engines.config().capsule("main", 1, "long").build())
            .events(next)
            .jobs((job, tx) -> Outcome.complete()));
    assertThat(next.awaitFinished(longJob, 2, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    Measurements.record("graceful drain (3 s) with a job that outlives it: stop() took", stopTook);
  }

  @Test
  void aHandlerStillRunningAfterTheDrainIsInterruptedOnceItsJobIsReleased() throws Exception {
    var running = new CountDownLatch(1);
    var stateWhenInterrupted = new java.util.concurrent.atomic.AtomicReference<String>();
    var events = new RecordingEvents();
    long id = JobFixtures.in(db).enqueue("endless");
    JobRow before = db.job(id); // not claimed yet: attempt 0
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofSeconds(1))
                        .capsule("main", 1, "endless")
                        .build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      try {
                        Thread.sleep(TimeUnit.MINUTES.toMillis(5)); // far beyond the drain
                      } catch (InterruptedException e) {
                        stateWhenInterrupted.set(db.job(job.id()).state());
                        throw e;
                      }
                      return Outcome.complete();
                    }));
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    long stopping = System.nanoTime();
    assertThat(engine.stop()).as("slots busy after the drain").isOne();
    Duration stopTook = Duration.ofNanos(System.nanoTime() - stopping);

    // The handler's thread returned within the stop (a container waits for it), not in 5 minutes,
    // and only after its job was back in available: the interrupt cannot fail the job.
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(1)).kind()).isNull();
    assertThat(stateWhenInterrupted.get()).isEqualTo("available");
    assertThat(stopTook).isLessThan(Duration.ofSeconds(1).plus(Engine.RELEASED_RETURN));
    JobRow after = db.job(id);
    assertThat(after.state()).isEqualTo("available");
    assertThat(after.maxAttempts() - after.attempt())
        .as("attempts left")
        .isEqualTo(before.maxAttempts() - before.attempt());
    assertThat(after.errors()).as("nothing recorded against the job").isEqualTo(before.errors());
    Measurements.record("drain (1 s) with a 5 min handler, interrupted: stop() took", stopTook);
  }
}

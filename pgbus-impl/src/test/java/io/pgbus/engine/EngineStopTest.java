package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A stop is prompt when nothing runs, and drains running handlers up to the drain timeout. */
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
  void aStopWaitsForARunningHandlerOnlyUntilTheDrainTimeout() throws Exception {
    var running = new CountDownLatch(1);
    var release = new CountDownLatch(1);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofMillis(300))
                        .capsule("main", 1, "slow")
                        .build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      release.await(30, TimeUnit.SECONDS);
                      return Outcome.complete();
                    }));
    long id = JobFixtures.in(db).enqueue("slow");
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    try {
      assertThat(engine.stop()).as("jobs left running after the drain").isEqualTo(1);
    } finally {
      release.countDown();
    }

    // The handler was not interrupted: it finishes, and its job completes.
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
  }
}

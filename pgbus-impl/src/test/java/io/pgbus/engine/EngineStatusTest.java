package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link EngineStatus} is the one view of a running engine that the runtime, the admin API and the
 * metrics get: a snapshot that says what the roles did, and that does not move afterwards.
 */
class EngineStatusTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration MINUTE = Duration.ofMinutes(1);

  @Test
  void aSnapshotShowsTheListenerTheCapsulesAndTheClaimsOfOneMoment() {
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("first", 2, "status_a")
                        .capsule("second", 1, "status_b")
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);

    long id = JobFixtures.in(db).enqueue("status_a");
    events.awaitFinished(id, 1, Duration.ofSeconds(10));
    EngineStatus status = engine.status();

    assertThat(status.running()).isTrue();
    assertThat(status.workerId()).isEqualTo(engine.config().workerId());
    assertThat(status.listener().state()).isEqualTo(ListenerState.DELIVERING);
    assertThat(status.listener().connects()).isEqualTo(1);
    assertThat(status.listener().backendPid()).isNotNull();
    assertThat(status.capsules())
        .extracting(EngineStatus.CapsuleStatus::name)
        .containsExactly("first", "second");
    EngineStatus.CapsuleStatus first = status.capsule("first");
    assertThat(first.queues()).containsExactly("status_a");
    assertThat(first.concurrency()).isEqualTo(2);
    assertThat(first.claimed()).isEqualTo(1);
    assertThat(first.claims()).isGreaterThanOrEqualTo(1);
    assertThat(status.capsule("second").claimed()).isZero();
    assertThat(status.capsule("third")).isNull();
    assertThat(first.stall(MINUTE)).isNull();

    long id2 = JobFixtures.in(db).enqueue("status_a");
    events.awaitFinished(id2, 1, Duration.ofSeconds(10));
    assertThat(status.capsule("first").claimed()).as("the old snapshot").isEqualTo(1);
    assertThat(engine.status().capsule("first").claimed()).as("a new one").isEqualTo(2);

    engine.stop();
    assertThat(engine.status().running()).isFalse();
    assertThat(engine.status().listener().state()).isEqualTo(ListenerState.STOPPED);
  }

  @Test
  void anEngineWithoutCapsulesHasNoListenerAndNoTicks() {
    Engine engine = engines.start(engines.builder(engines.config().build()));
    EngineStatus status = engine.status();
    assertThat(status.capsules()).isEmpty();
    assertThat(status.listener()).isEqualTo(EngineStatus.Listener.NONE);
    assertThat(status.ticks()).isZero();
  }

  @Test
  void aStalledCapsuleSaysWhyInTheOrderThatMatters() {
    assertThat(capsule(false, Duration.ZERO, Duration.ZERO).stall(MINUTE)).isNull();
    assertThat(capsule(false, Duration.ofMinutes(2), Duration.ZERO).stall(MINUTE))
        .isEqualTo("no progress");
    assertThat(capsule(false, Duration.ZERO, Duration.ofMinutes(2)).stall(MINUTE))
        .isEqualTo("claims failing");
    assertThat(capsule(true, Duration.ofMinutes(2), Duration.ofMinutes(2)).stall(MINUTE))
        .isEqualTo("loop ended");
    assertThat(capsule(false, MINUTE, MINUTE).stall(MINUTE)).as("at the threshold").isNull();
  }

  private static EngineStatus.CapsuleStatus capsule(
      boolean ended, Duration sinceLastBeat, Duration failingFor) {
    return new EngineStatus.CapsuleStatus(
        "c", List.of("q"), 1, 0, 0, 0, 0, Duration.ZERO, sinceLastBeat, ended, failingFor);
  }
}

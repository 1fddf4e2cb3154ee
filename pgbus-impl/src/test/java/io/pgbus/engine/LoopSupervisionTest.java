package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.FaultyDataSource;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No exception ends an engine loop (issue #10): a loop that meets one logs it, backs off and
 * carries on; a capsule that cannot claim, or whose loop an Error ended, says so in a short
 * category that readiness shows.
 */
class LoopSupervisionTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** A failure no engine code expects, as a bug in a port would throw. */
  private static final class SimulatedBug extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    SimulatedBug() {
      super("simulated bug for a loop supervision test");
    }
  }

  /** An Error no loop should catch. */
  private static final class SimulatedVmError extends Error {
    private static final long serialVersionUID = 1L;

    SimulatedVmError() {
      super("simulated VM error for a loop supervision test");
    }
  }

  @Test
  void aLeaderElectionThatMeetsARuntimeExceptionKeepsElecting() {
    var faults = new AtomicInteger(3);
    Engine engine =
        engines.start(
            Engine.builder(
                engines.config().leaderTtl(Duration.ofSeconds(1)).build(),
                faulty(Elector.class, faults, SimulatedBug::new)));

    Await.until(
        "the engine to be elected despite the failures", Duration.ofSeconds(10), engine::leader);
    assertThat(faults.get()).as("faults left").isLessThanOrEqualTo(0);
  }

  @Test
  void aCapsuleWhoseClaimsKeepFailingSaysSoAndClaimsOnceTheyWork() {
    var faults = new AtomicInteger(Integer.MAX_VALUE);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            Engine.builder(
                    engines.config().capsule("main", 1, "failing").build(),
                    faulty(Capsule.class, faults, SimulatedBug::new))
                .listenerConnections(engines.listenerConnections())
                .maintenance(false)
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    Capsule capsule = engine.capsules().get(0);
    long id = JobFixtures.in(db).enqueue("failing");

    Await.until(
        "the capsule to report its failing claims",
        Duration.ofSeconds(10),
        () -> capsule.status().stall(Duration.ofMillis(300)),
        "claims failing"::equals);

    faults.set(0);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    Await.until(
        "the stall to clear",
        Duration.ofSeconds(5),
        () -> capsule.status().stall(Duration.ofMillis(300)) == null);
  }

  @Test
  void aCapsuleWhoseLoopAnErrorEndedSaysSoAtOnce() {
    var faults = new AtomicInteger(1);
    Engine engine =
        engines.start(
            Engine.builder(
                    engines.config().capsule("main", 1, "doomed").build(),
                    faulty(Capsule.class, faults, SimulatedVmError::new))
                .listenerConnections(engines.listenerConnections())
                .maintenance(false)
                .jobs((job, tx) -> Outcome.complete()));
    Capsule capsule = engine.capsules().get(0);

    Await.until(
        "the capsule to report its ended loop",
        Duration.ofSeconds(10),
        () -> capsule.status().stall(Duration.ofMinutes(1)),
        "loop ended"::equals);
  }

  /**
   * The test database, except that a getConnection made from {@code caller}'s code throws what
   * {@code fault} makes while {@code faults} counts down above zero.
   */
  private static DataSource faulty(
      Class<?> caller, AtomicInteger faults, java.util.function.Supplier<Throwable> fault) {
    return FaultyDataSource.from(
        db.dataSource(),
        caller,
        () -> {
          if (faults.getAndDecrement() > 0) {
            throw fault.get();
          }
        });
  }
}

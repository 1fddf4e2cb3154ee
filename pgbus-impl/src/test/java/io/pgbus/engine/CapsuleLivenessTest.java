package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.FaultyDataSource;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Capsule#sinceLastBeat()}, which /health/live compares with the stall threshold, grows only
 * when a capsule makes no progress: its claim hangs, its loop died, or every slot holds a handler
 * that ran past its timeout and ignored the interrupt. An idle capsule, or one with a free slot,
 * refreshes it at least every 5 s; a stopped one reports zero.
 */
class CapsuleLivenessTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** An idle loop refreshes its beat at least this often (Capsule.MAX_SLEEP_NANOS). */
  private static final Duration BEAT = Duration.ofSeconds(5);

  private static final Duration NO_PROGRESS = BEAT.plusMillis(700);

  /** An Error no loop should catch: it kills the claim loop of the capsule that meets it. */
  private static final class SimulatedVmError extends Error {
    private static final long serialVersionUID = 1L;

    SimulatedVmError() {
      super("simulated VM error for a liveness test");
    }
  }

  @Test
  void onlyACapsuleThatMakesNoProgressShowsAStallLongerThanItsBeat() throws Exception {
    var hangArmed = new AtomicBoolean();
    var hang = new CountDownLatch(1);
    var dieArmed = new AtomicBoolean();
    var release = new CountDownLatch(1);
    try {
      Capsule hung =
          capsuleOf(
              start(
                  "hung",
                  1,
                  Duration.ofMinutes(1),
                  faulty(
                      hangArmed,
                      () -> {
                        hang.await(60, TimeUnit.SECONDS);
                        return null;
                      }),
                  (job, tx) -> Outcome.complete()));
      Capsule dead =
          capsuleOf(
              start(
                  "dead",
                  1,
                  Duration.ofMinutes(1),
                  faulty(
                      dieArmed,
                      () -> {
                        throw new SimulatedVmError();
                      }),
                  (job, tx) -> Outcome.complete()));
      Capsule full =
          capsuleOf(
              start(
                  "full",
                  1,
                  Duration.ofMillis(200),
                  db.dataSource(),
                  (job, tx) -> stallIgnoringInterrupts(release)));
      Capsule half =
          capsuleOf(
              start(
                  "half",
                  2,
                  Duration.ofMillis(200),
                  db.dataSource(),
                  (job, tx) -> stallIgnoringInterrupts(release)));
      Capsule idle =
          capsuleOf(
              start(
                  "idle",
                  1,
                  Duration.ofMinutes(1),
                  db.dataSource(),
                  (job, tx) -> Outcome.complete()));

      hangArmed.set(true);
      dieArmed.set(true);
      var jobs = JobFixtures.in(db);
      jobs.enqueue("hung");
      jobs.enqueue("dead");
      jobs.enqueue("full");
      jobs.enqueue("half");
      Await.until(
          "the stuck handlers to run",
          Duration.ofSeconds(10),
          () -> full.status().inFlight() == 1 && half.status().inFlight() == 1);

      List<Capsule> stalled = List.of(hung, dead, full);
      Await.until(
          "the stuck capsules to show no progress for longer than an idle beat",
          Duration.ofSeconds(20),
          () ->
              stalled.stream()
                  .allMatch(c -> c.status().sinceLastBeat().compareTo(NO_PROGRESS) > 0));

      assertThat(half.status().sinceLastBeat()).as("one slot of two stuck").isLessThan(NO_PROGRESS);
      assertThat(idle.status().sinceLastBeat()).as("idle").isLessThan(NO_PROGRESS);
    } finally {
      hang.countDown();
      release.countDown();
    }
  }

  @Test
  void aStoppedCapsuleReportsNoStall() {
    Engine engine =
        engines.start(
            engines
                .builder(engines.config().capsule("main", 1, "stopped").build())
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    Capsule capsule = engine.capsules().get(0);

    engine.stop();

    assertThat(capsule.status().sinceLastBeat()).isEqualTo(Duration.ZERO);
  }

  private Engine start(
      String queue, int concurrency, Duration jobTimeout, DataSource dataSource, JobFunction jobs) {
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule(queue, concurrency, queue)
                        .jobTimeout(jobTimeout)
                        .build(),
                    dataSource)
                .listenerConnections(engines.listenerConnections())
                .maintenance(false) // only the capsule's claims use the datasource after start
                .jobs(jobs));
    TestEngines.awaitDelivering(engine);
    Await.until(
        "the first poll", Duration.ofSeconds(10), () -> engine.status().ticks(), p -> p >= 1);
    return engine;
  }

  private static Capsule capsuleOf(Engine engine) {
    return engine.capsules().get(0);
  }

  /**
   * The test database, except that once armed, the next getConnection made by a capsule's claim
   * runs {@code fault} first (the ticker and the listener are left alone).
   */
  private static DataSource faulty(AtomicBoolean armed, Await.Check<Object> fault) {
    return FaultyDataSource.from(
        db.dataSource(),
        Capsule.class,
        () -> {
          if (armed.compareAndSet(true, false)) {
            fault.get();
          }
        });
  }

  private static Outcome stallIgnoringInterrupts(CountDownLatch release) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (release.getCount() > 0 && System.nanoTime() < deadline) {
      try {
        release.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      } catch (InterruptedException ignored) {
        // the job timeout; this handler stalls on regardless
      }
    }
    return Outcome.complete();
  }
}

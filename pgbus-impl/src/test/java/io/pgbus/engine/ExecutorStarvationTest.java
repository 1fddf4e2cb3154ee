package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An executor with a fixed number of threads and a queue, all of them held by the engine's loops
 * (as WildFly's default managed executor is on a 2-core machine): a claimed job waits for a thread
 * and never starts. {@link Capsule#executorWait()} shows it (and the capsule logs a warning that
 * names pgbus.executor once the wait passes 10 s); with a thread to spare it stays zero.
 */
class ExecutorStarvationTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void aClaimedJobThatWaitsForAThreadShowsAsExecutorWait() {
    // The listener, the capsule's loop and the ticker (no maintenance): every thread taken.
    ExecutorService loopsOnly = Executors.newFixedThreadPool(3);
    try {
      var handled = new AtomicInteger();
      Capsule capsule = startOn(loopsOnly, "starved", handled);
      JobFixtures.in(db).enqueue("starved");

      Await.until(
          "the claimed job to wait for a thread",
          Duration.ofSeconds(10),
          () -> capsule.status().executorWait(),
          w -> w.compareTo(Duration.ofMillis(500)) > 0);
      assertThat(capsule.status().inFlight()).isEqualTo(1);
      assertThat(handled).hasValue(0);
    } finally {
      loopsOnly.shutdownNow();
    }
  }

  @Test
  void withAThreadToSpareAJobStartsAtOnceAndNothingWaits() {
    ExecutorService roomy =
        Executors.newFixedThreadPool(config("roomy").executorThreadsNeeded(true));
    try {
      var handled = new AtomicInteger();
      Capsule capsule = startOn(roomy, "roomy", handled);
      JobFixtures.in(db).enqueue("roomy");

      Await.until("the job to run", Duration.ofSeconds(10), handled::get, n -> n == 1);
      assertThat(capsule.status().executorWait()).isEqualTo(Duration.ZERO);
    } finally {
      roomy.shutdownNow();
    }
  }

  @Test
  void withLoopThreadsOfTheirOwnAOneThreadExecutorRunsEveryJob() {
    ExecutorService oneThread = Executors.newFixedThreadPool(1);
    var loopThreads = new AtomicInteger();
    try {
      var handled = new AtomicInteger();
      Engine engine =
          engines.start(
              engines
                  .builder(config("own_loops"))
                  .executor(oneThread)
                  .loopThreads(
                      task -> {
                        loopThreads.incrementAndGet();
                        Thread t = new Thread(task, "test-loop");
                        t.setDaemon(true);
                        return t;
                      })
                  .maintenance(false)
                  .jobs(
                      (job, tx) -> {
                        handled.incrementAndGet();
                        return Outcome.complete();
                      }));
      TestEngines.awaitDelivering(engine);
      JobFixtures.in(db).enqueue("own_loops", 5);

      Await.until("the jobs to run", Duration.ofSeconds(10), handled::get, n -> n == 5);
      assertThat(engine.executorThreadsNeeded()).isEqualTo(1);
      assertThat(loopThreads.get())
          .as("listener, ticker, claim loop, watchdog")
          .isGreaterThanOrEqualTo(3);
    } finally {
      oneThread.shutdownNow();
    }
  }

  @Test
  void theThreadsNeededCountEveryLoopAndSlot() {
    EngineConfig two = engines.config().capsule("a", 4, "qa").capsule("b", 2, "qb").build();
    // 4 engine loops, the watchdog, 2 claim loops, 6 slots.
    assertThat(two.executorThreadsNeeded(true)).isEqualTo(13);
    // With the loops on threads of their own, the executor runs only the 6 slots.
    assertThat(two.executorThreadsNeeded(false)).isEqualTo(6);
  }

  private EngineConfig config(String queue) {
    return engines.config().capsule(queue, 1, queue).drainTimeout(Duration.ofMillis(200)).build();
  }

  private Capsule startOn(ExecutorService executor, String queue, AtomicInteger handled) {
    Engine engine =
        engines.start(
            engines
                .builder(config(queue))
                .executor(executor)
                .maintenance(false)
                .jobs(
                    (job, tx) -> {
                      handled.incrementAndGet();
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(engine);
    return engine.capsules().get(0);
  }
}

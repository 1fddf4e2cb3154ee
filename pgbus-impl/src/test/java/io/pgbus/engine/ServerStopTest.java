package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stop that the server itself cuts short (issue #32): WildFly's {@code :shutdown} and SIGTERM
 * interrupt running handlers and refuse the job's EJB calls, the very transactions that would
 * record their failures. The container is played at the {@link Transactions} port: once it
 * "suspends", every new transaction is refused, as WildFly's EJB container refuses new calls.
 */
class ServerStopTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** JDBC transactions that a "suspended server" refuses from the moment {@link #suspend}. */
  static final class SuspendingServer implements Transactions {
    private final JdbcTransactions jdbc;
    private final AtomicBoolean suspended = new AtomicBoolean();

    SuspendingServer(TestDatabase db) {
      this.jdbc = new JdbcTransactions(db.dataSource());
    }

    void suspend() {
      suspended.set(true);
    }

    @Override
    public <T> T inNewTransaction(Work<T> work) throws Exception {
      if (suspended.get()) {
        throw new IllegalStateException("WFLYEJB0511: the server is suspended (played)");
      }
      return jdbc.inNewTransaction(work);
    }
  }

  @Test
  void aJobWhoseFailureTheStoppingServerWouldNotRecordIsBackWithoutSpendingAnAttempt()
      throws Exception {
    var server = new SuspendingServer(db);
    var running = new CountDownLatch(1);
    var interrupt = new CountDownLatch(1);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofSeconds(5))
                        .capsule("main", 1, "cut")
                        .build())
                .transactions(server)
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      interrupt.await(30, TimeUnit.SECONDS);
                      throw new InterruptedException("the server shuts down (played)");
                    }));
    long id = JobFixtures.in(db).enqueue("cut");
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    // The server suspends and interrupts the handler before the application's stop begins: the
    // failure cannot be recorded, and the job stays running.
    server.suspend();
    interrupt.countDown();
    events.awaitFinished(id, 1, Duration.ofSeconds(10));
    assertThat(db.job(id).state()).isEqualTo("running");

    long stopping = System.nanoTime();
    engine.stop();
    Duration took = Duration.ofNanos(System.nanoTime() - stopping);

    JobRow after = db.job(id);
    assertThat(after.state())
        .as("back at the end of the stop, not after its lease")
        .isEqualTo("available");
    assertThat(after.maxAttempts() - after.attempt()).as("attempts left").isEqualTo(25);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.node WHERE worker_id = ?", engine.config().workerId()))
        .as("the node row goes once the jobs are back")
        .isZero();
    assertThat(took).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void aJobThatFailsWhileItsEngineDrainsGoesBackWithoutSpendingAnAttempt() throws Exception {
    var running = new CountDownLatch(1);
    var interrupt = new CountDownLatch(1);
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .drainTimeout(Duration.ofSeconds(20))
                        .capsule("main", 1, "pulled")
                        .build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      interrupt.await(30, TimeUnit.SECONDS);
                      throw new IllegalStateException("the datasource is closing (played)");
                    }));
    long id = JobFixtures.in(db).enqueue("pulled");
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Integer> stop = CompletableFuture.supplyAsync(engine::stop);
    Await.until(
        "the stop to begin",
        Duration.ofSeconds(10),
        () -> engine.listenerState(),
        s -> s == ListenerState.STOPPED);
    interrupt.countDown(); // the server pulls the ground from under the handler mid-drain

    assertThat(stop.get(10, TimeUnit.SECONDS)).as("slots busy after the drain").isZero();
    JobRow after = db.job(id);
    assertThat(after.state()).isEqualTo("available");
    assertThat(after.maxAttempts() - after.attempt()).as("attempts left").isEqualTo(25);
    assertThat(after.errors()).as("no failure recorded").isEmpty();
  }

  @Test
  void aDrainLongerThanTheHeartbeatTtlKeepsItsJobsFromTheLeadersRescue() throws Exception {
    var running = new CountDownLatch(1);
    var finish = new CountDownLatch(1);
    var events = new RecordingEvents();
    EngineConfig.Builder shortTtl =
        engines
            .config()
            .set(ExecutionConfig.HEARTBEAT_TTL, Duration.ofSeconds(1))
            .rescueInterval(Duration.ofMillis(100))
            .drainTimeout(Duration.ofSeconds(10));
    Engine draining =
        engines.start(
            engines
                .builder(shortTtl.capsule("main", 1, "slow").build())
                .maintenance(false)
                .events(events)
                .jobs(
                    (job, tx) -> {
                      running.countDown();
                      finish.await(30, TimeUnit.SECONDS);
                      return Outcome.complete();
                    }));
    long id = JobFixtures.in(db).enqueue("slow");
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    engines.start(
        engines
            .builder(shortTtl.capsule("other", 1, "elsewhere").build())
            .jobs((j, t) -> Outcome.complete()));

    CompletableFuture<Integer> stop = CompletableFuture.supplyAsync(draining::stop);
    Thread.sleep(2_500); // over two TTLs of draining: a silent node row would be rescued by now
    finish.countDown();

    assertThat(stop.get(15, TimeUnit.SECONDS)).isZero();
    JobRow after = db.job(id);
    assertThat(after.state()).as("completed by the drain, never rescued").isEqualTo("completed");
    assertThat(after.attempt()).isEqualTo(1);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(5)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
  }

  @Test
  void anExecutorThatRefusesJobsMakesTheCapsuleBackOffInsteadOfClaimingInATightLoop()
      throws Exception {
    var refusing = new AtomicBoolean(true);
    var pool = java.util.concurrent.Executors.newCachedThreadPool();
    java.util.concurrent.Executor executor =
        task -> {
          if (refusing.get()) {
            throw new java.util.concurrent.RejectedExecutionException("shut down (played)");
          }
          pool.execute(task);
        };
    try {
      var events = new RecordingEvents();
      Engine engine =
          engines.start(
              engines
                  .builder(engines.config().capsule("main", 1, "refused").build())
                  .executor(executor)
                  .loopThreads(Thread::new)
                  .maintenance(false)
                  .events(events)
                  .jobs((job, tx) -> Outcome.complete()));
      Capsule capsule = engine.capsules().get(0);
      long id = JobFixtures.in(db).enqueue("refused");
      Await.until("a first claim", Duration.ofSeconds(10), () -> capsule.status().claimed() > 0);
      long claimsBefore = capsule.status().claims();
      Thread.sleep(1_000);
      long claimsInASecond = capsule.status().claims() - claimsBefore;

      assertThat(claimsInASecond)
          .as("claims in one second while every job is refused (backing off from 100 ms)")
          .isLessThanOrEqualTo(5);
      assertThat(db.job(id).state()).as("handed back, not lost").isIn("available", "running");
      assertThat(db.job(id).attempt()).as("a refused job spends no attempt").isLessThanOrEqualTo(1);

      refusing.set(false);
      assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(15)).kind())
          .as("runs once the executor takes jobs again")
          .isEqualTo(Outcome.Kind.COMPLETE);
    } finally {
      pool.shutdownNow();
    }
  }
}

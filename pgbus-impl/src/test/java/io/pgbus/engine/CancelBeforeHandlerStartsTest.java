package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
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
 * A job is {@code running} from its claim, but its handler starts later: in a transaction of
 * several jobs, only after the handlers before it. A cancel heard in between still stops it when
 * its handler starts.
 */
class CancelBeforeHandlerStartsTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.audit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void aCancelHeardBeforeTheHandlerStartsStopsItWhenItStarts() throws Exception {
    var firstRunning = new CountDownLatch(1);
    var releaseFirst = new CountDownLatch(1);
    var events = new RecordingEvents();
    List<Long> ids = JobFixtures.in(db).enqueue("pair", 2);
    long first = ids.get(0);
    long second = ids.get(1);
    Engine runner =
        engines.start(
            engines
                .builder(
                    engines.config().capsule(new CapsuleConfig("c", List.of("pair"), 1, 2)).build())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      if (job.id() == first && job.attempt() == 1) {
                        firstRunning.countDown();
                        releaseFirst.await(30, TimeUnit.SECONDS);
                      } else if (job.id() == second) {
                        Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // only an interrupt ends it
                      }
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(runner);
    assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(db.job(second).state()).as("claimed with the first").isEqualTo("running");

    boolean requested;
    try (Connection c = db.connect()) {
      requested = runner.jobs().cancel(c, second);
    }
    assertThat(requested).isTrue();
    // Heard while the second handler has not started: nothing runs that it could stop yet.
    Await.until(
        "the request to be heard",
        Duration.ofSeconds(10),
        runner.notifier()::cancelRequests,
        n -> n == 1);
    assertThat(db.job(second).state()).isEqualTo("running");
    releaseFirst.countDown();

    Await.until(
        "the second job to be cancelled",
        Duration.ofSeconds(20),
        () -> db.job(second).state(),
        s -> s.equals("cancelled"));
    // Its cancel rolled the shared transaction back; the first ran again on its own.
    Await.until(
        "the first job to complete",
        Duration.ofSeconds(20),
        () -> db.job(first).state(),
        s -> s.equals("completed"));
  }

  @Test
  void anEarlyCancelHeardJustBeforeAFloodOfOthersStillStopsItsJobWhenItStarts() throws Exception {
    var firstRunning = new CountDownLatch(1);
    var releaseFirst = new CountDownLatch(1);
    List<Long> ids = JobFixtures.in(db).enqueue("pair", 2);
    long first = ids.get(0);
    long second = ids.get(1);
    Engine runner =
        engines.start(
            engines
                .builder(
                    engines.config().capsule(new CapsuleConfig("c", List.of("pair"), 1, 2)).build())
                .jobs(
                    (job, tx) -> {
                      if (job.id() == first && job.attempt() == 1) {
                        firstRunning.countDown();
                        releaseFirst.await(30, TimeUnit.SECONDS);
                      } else if (job.id() == second) {
                        Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // only an interrupt ends it
                      }
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(runner);
    assertThat(firstRunning.await(10, TimeUnit.SECONDS)).isTrue();

    // Requests for jobs running nowhere (another JVM's, or forged) fill most of the memory of
    // early requests, then the real one comes, then more of the others: past the bound.
    forge(1000, 10_000_000);
    try (Connection c = db.connect()) {
      assertThat(runner.jobs().cancel(c, second)).isTrue();
    }
    forge(100, 20_000_000);
    Await.until(
        "all requests to be heard",
        Duration.ofSeconds(20),
        runner.notifier()::cancelRequests,
        n -> n == 1101);
    releaseFirst.countDown();

    Await.until(
        "the second job to be cancelled",
        Duration.ofSeconds(20),
        () -> db.job(second).state(),
        s -> s.equals("cancelled"));
  }

  /** {@code n} distinct well-formed requests for jobs that do not exist, in one transaction. */
  private static void forge(int n, long fromId) {
    db.queryLong(
        "SELECT count(pg_notify('pgbus-cancel', (? + g)::text || ':1'))"
            + " FROM generate_series(1, ?) g",
        fromId,
        n);
  }
}

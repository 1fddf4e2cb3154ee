package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * When the LISTEN connection dies, the notifier reconnects, and because LISTEN never replays, it
 * makes every capsule re-read the table: a job enqueued while nobody listened still runs, without
 * waiting for the poll.
 */
class ListenerReconnectTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration CEILING = Duration.ofSeconds(60);

  @Test
  void aJobEnqueuedWhileTheListenerWasDownRunsAfterItReconnects() throws Exception {
    // The second connection waits for the test's go, so the gap is as long as the test needs.
    var opens = new AtomicInteger();
    var reconnectAllowed = new CountDownLatch(1);
    String url = db.jdbcUrl();
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 2, "reconnecting")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build(),
                    db.dataSource())
                .listenerConnections(
                    () -> {
                      if (opens.incrementAndGet() > 1) {
                        await(reconnectAllowed);
                      }
                      return DriverManager.getConnection(url);
                    })
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    try {
      runsTheJobOfTheGap(engine, events, reconnectAllowed);
    } finally {
      reconnectAllowed.countDown(); // never leave the notifier waiting
    }
  }

  private void runsTheJobOfTheGap(
      Engine engine, RecordingEvents events, CountDownLatch reconnectAllowed) {
    TestEngines.awaitDelivering(engine);
    Notifier notifier = engine.notifier();
    assertThat(notifier.connects()).isEqualTo(1);
    long before = JobFixtures.in(db).enqueue("reconnecting");
    events.awaitFinished(before, 1, Duration.ofSeconds(10));

    assertThat(
            db.queryLong(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    + " WHERE application_name = ? AND datname = current_database()",
                Channels.LISTENER_APPLICATION_NAME))
        .as("listener backends terminated")
        .isEqualTo(1);
    Await.until(
        "the notifier to notice the lost connection",
        Duration.ofSeconds(10),
        notifier::state,
        s -> s == ListenerState.RECONNECTING);
    long during = JobFixtures.in(db).enqueue("reconnecting");
    assertThat(db.job(during).state()).as("nobody heard about it yet").isEqualTo("available");
    assertThat(notifier.connects()).isEqualTo(1);

    long gapEnded = System.nanoTime();
    reconnectAllowed.countDown();

    Await.until(
        "the listener to reconnect", Duration.ofSeconds(10), notifier::connects, n -> n == 2);
    events.awaitFinished(during, 1, Duration.ofSeconds(10));
    assertThat(Duration.ofNanos(System.nanoTime() - gapEnded))
        .as("from reconnect to the job done")
        .isLessThan(Duration.ofSeconds(5));
    TestEngines.awaitDelivering(engine);
    assertThat(db.job(during).state()).isEqualTo("completed");
  }

  private static void await(CountDownLatch gate) throws SQLException {
    try {
      if (!gate.await(30, TimeUnit.SECONDS)) {
        throw new SQLException("the test never allowed the listener to reconnect");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted while waiting to reconnect", e);
    }
  }
}

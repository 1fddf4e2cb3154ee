package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.engine.Channels;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * pg_terminate_backend on the listener of a deployed application: the listener on the server's
 * non-JTA datasource stops delivering within a second, comes back after one reconnect, and a job
 * enqueued while it was away runs, found by the reconnect's synthetic wake (the poll interval is a
 * minute here). The timings go to the server log with a [measure] prefix.
 */
@ExtendWith(ArquillianExtension.class)
class ListenerKillIT {

  private static final String TERMINATE =
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
          + " WHERE application_name = ? AND datname = current_database()";

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "listener-kill",
            "pgbus.capsules=kill",
            "pgbus.capsule.kill.queues=it_kill",
            "pgbus.poll-interval=60s",
            "pgbus.poll-ceiling=60s",
            // 250-750 ms before reconnecting: a gap long enough to enqueue into.
            "pgbus.listener.reconnect-min=500ms")
        .addClass(CompletingHandler.class);
  }

  @Inject PgbusRuntime runtime;
  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aTerminatedListenerIsBackAfterOneReconnectAndTheJobOfTheGapRuns() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(60),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    Supplier<EngineStatus.Listener> listener = () -> runtime.engine().status().listener();
    // One job first, so the rounds measure the wake path rather than the first job's warm-up
    // (bean creation, the first JTA job transaction).
    awaitCompleted(
        jobs.enqueue("it_kill", new Marker("warm-up", false), EnqueueOptions.defaults()));

    for (int round = 1; round <= 3; round++) {
      long connects = listener.get().connects();
      long killed = System.nanoTime();
      assertTrue(
          Sql.count(ds, TERMINATE, Channels.LISTENER_APPLICATION_NAME) >= 1,
          "no listener to terminate");
      Await.until(
          "the listener to stop delivering",
          Duration.ofSeconds(5),
          () -> !listener.get().state().delivering());
      long toDegrade = millisSince(killed);
      long id =
          jobs.enqueue("it_kill", new Marker("kill-" + round, false), EnqueueOptions.defaults());
      boolean inGap = listener.get().connects() == connects;
      Await.until(
          "the listener to deliver again",
          Duration.ofSeconds(20),
          () -> listener.get().state() == ListenerState.DELIVERING);
      long toRecover = millisSince(killed);
      awaitCompleted(id);
      long toDone = millisSince(killed);

      assertTrue(toDegrade < 1000, "terminate -> not delivering took " + toDegrade + " ms");
      assertTrue(inGap, "the job was enqueued after the listener was back");
      assertEquals(connects + 1, listener.get().connects(), "reconnects for one kill");
      System.out.println(
          String.format(
              "[pgbus-it] [measure] %s listener kill %d: not delivering %d ms, delivering"
                  + " again %d ms, gap job done %d ms",
              TestServer.current().label(), round, toDegrade, toRecover, toDone));
    }
  }

  private void awaitCompleted(long id) throws Exception {
    Await.until(
        "job " + id + " to complete",
        Duration.ofSeconds(30),
        () ->
            "completed"
                .equals(Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id)));
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A NOTIFY wakes only the capsules that read the notified queue. */
@ExtendWith(ArquillianExtension.class)
class WakeRoutingIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "wake-routing",
        "pgbus.capsules=left,right",
        "pgbus.capsule.left.queues=it_left",
        "pgbus.capsule.right.queues=it_right",
        // No polling during the test: every claim must come from a wake.
        "pgbus.poll-ceiling=1h");
  }

  @Inject PgbusRuntime runtime;
  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void notifyOnOneCapsulesQueueDoesNotMakeTheOtherClaim() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(30),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    Map<String, Long> settled = quiet();

    for (int i = 0; i < 20; i++) {
      long id = enqueuer.enqueue("it_left", "left-" + UUID.randomUUID(), false);
      Await.until(
          "job " + id + " to complete",
          Duration.ofSeconds(30),
          () ->
              "completed"
                  .equals(Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id)));
    }

    Map<String, Long> after = runtime.claimsByCapsule();
    assertEquals(
        settled.get("right"), after.get("right"), "right claimed: " + settled + " -> " + after);
    assertTrue(
        after.get("left") >= settled.get("left") + 20, "left claims: " + settled + " -> " + after);
  }

  /** Waits until the start-up claims are over: no counter moves for half a second. */
  private Map<String, Long> quiet() throws Exception {
    Map<String, Long>[] last = new Map[] {runtime.claimsByCapsule()};
    long[] since = {System.nanoTime()};
    Await.until(
        "claim counters to settle",
        Duration.ofSeconds(30),
        () -> {
          Map<String, Long> now = runtime.claimsByCapsule();
          if (!now.equals(last[0])) {
            last[0] = now;
            since[0] = System.nanoTime();
          }
          return System.nanoTime() - since[0] > Duration.ofMillis(500).toNanos();
        });
    return last[0];
  }
}

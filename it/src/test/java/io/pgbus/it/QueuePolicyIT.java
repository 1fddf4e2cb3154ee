package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per-queue policy in the server (issue #14): the attributes of {@code @Handles} set a queue's job
 * timeout and attempts over the global keys, and {@code pgbus.queue.<name>.*} wins over the
 * annotation. The global job timeout here is 2 minutes; the handler hangs until interrupted.
 */
@ExtendWith(ArquillianExtension.class)
class QueuePolicyIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "queue-policy",
            "pgbus.capsules=slow",
            "pgbus.capsule.slow.queues=it_slow,it_slow_cfg",
            "pgbus.job-timeout=2m",
            "pgbus.queue.it_slow_cfg.job-timeout=1500ms")
        .addClass(SlowHandler.class);
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void theTimeoutAndAttemptsOfHandlesApplyToTheQueue() throws Exception {
    long id = enqueuer.enqueue("it_slow", "slow-" + UUID.randomUUID(), false);
    awaitDead(id);
    assertEquals(1, Sql.count(ds, "SELECT max_attempts FROM pgbus.job WHERE id = ?", id));
    String error = error(id);
    assertTrue(error.contains("timed out after PT0.5S"), error);
  }

  @Test
  void theConfigurationWinsOverTheAnnotation() throws Exception {
    long id = enqueuer.enqueue("it_slow_cfg", "slow-cfg-" + UUID.randomUUID(), false);
    awaitDead(id);
    assertEquals(
        1,
        Sql.count(ds, "SELECT max_attempts FROM pgbus.job WHERE id = ?", id),
        "what the configuration leaves open still comes from @Handles");
    String error = error(id);
    assertTrue(error.contains("timed out after PT1.5S"), error);
  }

  private void awaitDead(long id) throws Exception {
    Await.until(
        "job " + id + " to be dead",
        Duration.ofSeconds(30),
        () ->
            Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'dead'", id)
                == 1);
  }

  private String error(long id) throws Exception {
    return String.valueOf(
        Sql.value(ds, "SELECT errors->0->>'error' FROM pgbus.job WHERE id = ?", id));
  }
}

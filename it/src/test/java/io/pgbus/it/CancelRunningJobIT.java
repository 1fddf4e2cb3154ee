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
 * JobQueue.cancel on a running job in the server (issue #14): the NOTIFY reaches the listener
 * connection of the container, the handler is interrupted, the job ends cancelled and the business
 * row its handler wrote through the JTA datasource is rolled back. A handler blocked in a SQL
 * statement on the JTA datasource is stopped by a cancel of that statement, through the container's
 * connection wrapper (issue #23, item 11).
 */
@ExtendWith(ArquillianExtension.class)
class CancelRunningJobIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "cancel-running",
            "pgbus.capsules=main",
            "pgbus.capsule.main.queues=it_cancel,it_cancel_sql",
            "pgbus.capsule.main.concurrency=1")
        .addClasses(CancellableHandler.class, SqlSleepingHandler.class);
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aCancelledRunningJobEndsCancelledWithItsWritesRolledBack() throws Exception {
    long id = enqueuer.enqueue("it_cancel", "cancel-" + UUID.randomUUID(), false);
    Await.until(
        "job " + id + " to run",
        Duration.ofSeconds(30),
        () ->
            Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'running'", id)
                == 1);

    long cancelled = System.nanoTime();
    assertTrue(enqueuer.cancel(id), "the request was recorded");
    Await.until(
        "job " + id + " to be cancelled",
        Duration.ofSeconds(10),
        () ->
            Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'cancelled'", id)
                == 1);
    Duration took = Duration.ofNanos(System.nanoTime() - cancelled);

    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
    assertEquals(
        1,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.audit WHERE job_id = ? AND action = 'cancel'"
                + " AND detail->>'attempt' = '1'",
            id));
    assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "took " + took);
    System.out.println(
        "[measure] in the server: cancel -> job cancelled = " + took.toMillis() + " ms");
  }

  @Test
  void aCancelStopsAHandlerInsideASqlStatementAndItsPooledConnectionServesTheNextJob()
      throws Exception {
    long id = enqueuer.enqueue("it_cancel_sql", "sleep-" + UUID.randomUUID(), false);
    Await.until(
        "job " + id + " to sleep in pg_sleep(30)",
        Duration.ofSeconds(30),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pg_stat_activity WHERE state = 'active'"
                        + " AND query = 'SELECT pg_sleep(30)' AND datname = current_database()")
                == 1);

    long cancelled = System.nanoTime();
    assertTrue(enqueuer.cancel(id), "the request was recorded");
    Await.until(
        "job " + id + " to be cancelled",
        Duration.ofSeconds(30),
        () ->
            Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'cancelled'", id)
                == 1);
    Duration took = Duration.ofNanos(System.nanoTime() - cancelled);
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
    assertTrue(took.compareTo(Duration.ofSeconds(3)) < 0, "took " + took + " (pg_sleep(30))");

    // One slot, so the next job runs on the same thread and, pooled, most likely the same
    // connection: a stray cancel would fail its pg_sleep(0.5).
    long next = enqueuer.enqueue("it_cancel_sql", "quick-" + UUID.randomUUID(), false);
    Await.until(
        "job " + next + " to complete",
        Duration.ofSeconds(30),
        () ->
            Sql.count(
                    ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'completed'", next)
                == 1);
    assertEquals(
        1,
        Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND attempt = 1", next),
        "completed at its first attempt");
    System.out.println(
        "[measure] in the server: cancel of a handler in pg_sleep(30) -> job cancelled = "
            + took.toMillis()
            + " ms");
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

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
 * A handler in {@code JobTransaction.HANDLER} mode runs past the server's transaction timeout (120
 * s on the test servers) and its job completes once, with the rows it committed itself; the same
 * job in the default mode loses its transaction to the timeout and does not complete. Both run at
 * once.
 */
@ExtendWith(ArquillianExtension.class)
class LongRunningHandlerIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "long-running",
            "pgbus.capsules=own,container",
            "pgbus.capsule.own.queues=it_own_tx",
            "pgbus.capsule.container.queues=it_container_tx",
            // A long backoff keeps the failed job retryable while the test looks at it.
            "pgbus.retry.base=1h",
            "pgbus.retry.cap=2h")
        .addClasses(
            OwnTransactionHandler.class, ContainerTransactionHandler.class, HandledRows.class);
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aHandlerInItsOwnTransactionsOutlivesTheTransactionTimeoutAndCompletesOnce()
      throws Exception {
    String text = "long-" + UUID.randomUUID();
    long own = enqueuer.enqueue("it_own_tx", text, false);
    long container = enqueuer.enqueue("it_container_tx", text, false);

    Duration wait = OwnTransactionHandler.RUNS_FOR.plusSeconds(60);
    Await.until("job " + own + " to complete", wait, () -> "completed".equals(state(own)));
    Await.until(
        "job " + container + " to fail by the transaction timeout",
        wait,
        () -> "retryable".equals(state(container)));

    long ranFor =
        Sql.count(
            ds,
            "SELECT extract(epoch FROM finalized_at - attempted_at)::bigint FROM pgbus.job"
                + " WHERE id = ?",
            own);
    assertNotEquals(
        -1,
        Long.compare(ranFor, OwnTransactionHandler.RUNS_FOR.toSeconds()),
        "ran for " + ranFor + " s");
    assertEquals(1, Sql.count(ds, "SELECT attempt FROM pgbus.job WHERE id = ?", own));
    assertEquals(
        2,
        Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ? AND attempt = 1", own),
        "the rows it committed itself, before and after the timeout");
    assertEquals(
        1,
        Sql.count(ds, "SELECT count(*) FROM it_handled WHERE text = ?", text + ":after"),
        "it ran once");

    assertEquals(1, Sql.count(ds, "SELECT attempt FROM pgbus.job WHERE id = ?", container));
    assertEquals(
        0,
        Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", container),
        "the default mode's row, rolled back with its transaction");
  }

  private Object state(long id) throws Exception {
    return Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }
}

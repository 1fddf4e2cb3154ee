package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.ejb.EJBTransactionRolledbackException;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * JobQueue.enqueue joins the caller's JTA transaction: rollback leaves nothing, commit runs once.
 */
@ExtendWith(ArquillianExtension.class)
class TransactionalEnqueueIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "tx-enqueue",
        "pgbus.capsules=tx",
        "pgbus.capsule.tx.queues=it_tx",
        "pgbus.capsule.tx.concurrency=2");
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void rolledBackEnqueueLeavesNoJobAndCommittedOneRunsExactlyOnce() throws Exception {
    String rolledBack = "rb-" + UUID.randomUUID();
    String committed = "ok-" + UUID.randomUUID();

    try {
      enqueuer.enqueueThenRollBack("it_tx", rolledBack);
    } catch (EJBTransactionRolledbackException expected) {
      // setRollbackOnly may surface this way; either way the transaction is gone.
    }
    long id = enqueuer.enqueue("it_tx", committed, false);

    Await.until(
        "job " + id + " to complete",
        Duration.ofSeconds(30),
        () ->
            "completed"
                .equals(Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id)));

    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE text = ?", committed));
    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM it_orders WHERE text = ?", committed));
    assertEquals(
        0, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE payload->>'text' = ?", rolledBack));
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_orders WHERE text = ?", rolledBack));
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE text = ?", rolledBack));
    assertEquals(
        0, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id > ? AND queue = 'it_tx'", id));
  }
}

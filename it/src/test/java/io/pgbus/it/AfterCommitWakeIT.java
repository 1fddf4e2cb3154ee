package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.engine.EngineStatus;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.ejb.EJBTransactionRolledbackException;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * In {@code pgbus.wake-mode=coalesced} (the default) a JTA enqueue wakes after its transaction
 * commits, through one interposed Synchronization per transaction: this JVM's capsule in-process,
 * with no listener at all, long before the poll ceiling; never before the commit; never after a
 * rollback.
 */
@ExtendWith(ArquillianExtension.class)
class AfterCommitWakeIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "after-commit-wake",
            "pgbus.capsules=wake",
            "pgbus.capsule.wake.queues=it_after_commit",
            // No NOTIFY reaches this JVM (the listener points nowhere) and no poll comes during
            // the test: a job that runs was woken in-process.
            "pgbus.listener.url=jdbc:postgresql://127.0.0.1:1/none",
            "pgbus.poll-interval=1h",
            "pgbus.poll-ceiling=1h")
        .addClasses(AfterCommitEnqueuer.class, CompletingHandler.class);
  }

  @Inject PgbusRuntime runtime;
  @EJB AfterCommitEnqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aCommittedTransactionWakesTheLocalCapsuleOnceAfterItsCommitAndARolledBackOneNever()
      throws Exception {
    Await.until(
        "the engine to run", Duration.ofSeconds(60), () -> runtime.engine().status().running());
    long before = enqueuer.localWakes();

    try {
      enqueuer.enqueueThenRollBack("it_after_commit", "rb-" + UUID.randomUUID());
    } catch (EJBTransactionRolledbackException expected) {
      // setRollbackOnly may surface this way; either way the transaction is gone.
    }
    assertEquals(before, enqueuer.localWakes(), "wakes after a rollback");

    String text = "ok-" + UUID.randomUUID();
    long seenInside = enqueuer.enqueueTwoThenCountWakes("it_after_commit", text);
    assertEquals(before, seenInside, "wakes seen inside the transaction, before its commit");
    Await.until(
        "both jobs to complete",
        Duration.ofSeconds(30),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE payload->>'text' LIKE ? AND state ="
                        + " 'completed'",
                    text + "%")
                == 2);
    EngineStatus.Wakes wakes = runtime.engine().status().wakes();
    assertEquals(before + 1, wakes.local(), "one wake for the transaction's two enqueues");
    assertTrue(wakes.handed() >= 1, "the sender was handed the queue: " + wakes);
  }
}

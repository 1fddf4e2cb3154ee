package io.pgbus.jakarta;

import io.pgbus.engine.AfterCommit;
import io.pgbus.engine.PendingWake;
import io.pgbus.engine.Wake;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.sql.Connection;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * {@link AfterCommit} under JTA: the enqueues of one transaction share one {@link PendingWake},
 * kept as a resource of the transaction, and one interposed {@link Synchronization} delivers it
 * after the commit (to this JVM's capsules in-process, and to the sender for the others); after a
 * rollback, nothing. Without a transaction each enqueue commits with its statement and wakes right
 * after it. An interposed synchronization runs after the resources committed, so no wake is ever
 * seen before the job is.
 *
 * <p>Without the registry (never seen on a Jakarta EE server), or in a transaction that no longer
 * takes synchronizations, the database wakes, inside the transaction, as in {@code in-transaction}.
 */
final class JtaAfterCommit implements AfterCommit {

  private static final System.Logger LOG = System.getLogger(JtaAfterCommit.class.getName());

  /** The transaction's resource key: one pending wake per transaction. */
  private static final Object KEY = JtaAfterCommit.class.getName() + ".pending";

  private final Consumer<Wake> delivery;
  private final TransactionRegistry registry =
      new TransactionRegistry(
          "enqueues send their wake inside the transaction, as with"
              + " pgbus.wake-mode=in-transaction");

  JtaAfterCommit(Consumer<Wake> delivery) {
    this.delivery = Objects.requireNonNull(delivery, "delivery");
  }

  @Override
  public PendingWake pending(Connection c) {
    TransactionSynchronizationRegistry r = registry.get();
    if (r == null) {
      return null;
    }
    if (r.getTransactionKey() == null) {
      return PendingWake.immediate(delivery);
    }
    if (r.getResource(KEY) instanceof PendingWake p) {
      return p;
    }
    PendingWake p = PendingWake.atCommit(delivery);
    try {
      r.registerInterposedSynchronization(new AfterCompletion(p));
    } catch (IllegalStateException e) {
      // Completing or marked for rollback: let the database decide, as in-transaction does.
      return null;
    }
    r.putResource(KEY, p);
    return p;
  }

  /** Delivers the transaction's wake after its commit, and never after a rollback. */
  private record AfterCompletion(PendingWake pending) implements Synchronization {

    @Override
    public void beforeCompletion() {}

    @Override
    public void afterCompletion(int status) {
      if (status != Status.STATUS_COMMITTED) {
        return;
      }
      try {
        pending.committed();
      } catch (RuntimeException e) {
        // The jobs are committed: the poll finds them. Never fail the caller's completion.
        LOG.log(System.Logger.Level.WARNING, "pgbus: a wake after a commit failed", e);
      }
    }
  }
}

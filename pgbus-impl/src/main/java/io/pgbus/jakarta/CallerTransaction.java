package io.pgbus.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.TransactionSynchronizationRegistry;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Runs an operation of several statements on the JTA datasource as one unit: in the caller's
 * transaction when there is one (it commits or rolls back with the caller's work), else in a
 * transaction of its own. A cancel of a job in a batch or with dependents is two statements (the
 * job's final state, then its report to the batch and dependents, pgbus.job_finished); called
 * outside a transaction they would commit apart, and a crash between them would leave the
 * dependents waiting on a cancelled job for good.
 *
 * <p>Whether the caller has a transaction is asked of the {@link
 * TransactionSynchronizationRegistry}: a shareable connection's {@code getAutoCommit()} cannot tell
 * (Open Liberty answers true inside a global transaction and then refuses {@code setAutoCommit},
 * DSRA9250E).
 */
@ApplicationScoped
public class CallerTransaction {

  @Inject PgbusResources resources;
  @Inject JobTransactions transactions;

  private final TransactionRegistry registry =
      new TransactionRegistry(
          "a cancel called outside a transaction commits its statements one by one");

  /** Work on a connection of the JTA datasource. */
  @FunctionalInterface
  public interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code work} in the caller's transaction, or in one of its own (which its exceptions roll
   * back); they come out as thrown ({@link JobTransactions} unwraps them).
   */
  public <T> T run(Work<T> work) throws SQLException {
    if (callerHasTransaction()) {
      try (Connection c = resources.dataSource().getConnection()) {
        return work.run(c);
      }
    }
    try {
      return transactions.inNewTransaction(work::run);
    } catch (SQLException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IllegalStateException("pgbus: unexpected failure of a transaction", e);
    }
  }

  private boolean callerHasTransaction() {
    TransactionSynchronizationRegistry r = registry.get();
    // Without the registry (never seen on a Jakarta EE server): the caller's connection as before.
    return r == null || r.getTransactionKey() != null;
  }
}

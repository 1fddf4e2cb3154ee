package io.pgbus.jakarta;

import io.pgbus.engine.Transactions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.HeuristicMixedException;
import jakarta.transaction.HeuristicRollbackException;
import java.sql.SQLException;

/**
 * {@link Transactions} on the container: each job in a new container-managed JTA transaction
 * ({@link JobTransactionBoundary}, REQUIRES_NEW), a {@link io.pgbus.JobTransaction#HANDLER} handler
 * with none (NOT_SUPPORTED). The work's exceptions come out as it threw them: a runtime exception
 * crosses the EJB call carried as a checked one, so that the container does not log a failing
 * handler as an unexpected error, and is unwrapped here.
 */
@ApplicationScoped
public class JobTransactions implements Transactions {

  @Inject JobTransactionBoundary boundary;

  @Override
  public <T> T inNewTransaction(Work<T> work) throws Exception {
    try {
      return boundary.inNewTransaction(work);
    } catch (JobTransactionBoundary.CarriedFailure e) {
      throw e.failure();
    } catch (RuntimeException e) {
      throw outcomeUnknown(e);
    }
  }

  /**
   * A heuristic outcome of the container's commit is a connection that broke in the commit (a
   * PgBouncer or database restart: XAER_RMFAIL on a one-phase commit). pgbus's engine knows
   * connection losses by SQLSTATE class 08, and retries what it must record after one (a job's
   * failure, fenced, so a retry of a commit that did happen changes nothing); so it gets one, 08007
   * (transaction resolution unknown), with the container's exception as the cause.
   */
  static Exception outcomeUnknown(RuntimeException e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof HeuristicMixedException || c instanceof HeuristicRollbackException) {
        return new SQLException(
            "the transaction's outcome is unknown (" + c + "): its connection broke", "08007", e);
      }
    }
    return e;
  }

  @Override
  public <T> T outsideTransaction(Unbound<T> work) throws Exception {
    try {
      return boundary.outsideTransaction(work);
    } catch (JobTransactionBoundary.CarriedFailure e) {
      throw e.failure();
    }
  }
}

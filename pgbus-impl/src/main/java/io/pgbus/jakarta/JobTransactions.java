package io.pgbus.jakarta;

import io.pgbus.engine.Transactions;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

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
    }
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

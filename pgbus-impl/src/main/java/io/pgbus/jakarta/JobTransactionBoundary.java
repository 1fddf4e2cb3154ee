package io.pgbus.jakarta;

import io.pgbus.engine.Transactions;
import jakarta.annotation.Resource;
import jakarta.ejb.LocalBean;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import java.sql.Connection;

/**
 * The EJB behind {@link JobTransactions}: runs each job in a new container-managed JTA transaction.
 * The connection handed to the engine comes from the JTA datasource, so it is enlisted in that
 * transaction: the job's completion commits together with whatever the handler wrote through the
 * same datasource.
 *
 * <p>A {@link io.pgbus.JobTransaction#HANDLER} handler runs through {@link #outsideTransaction}
 * instead, with no transaction at all (NOT_SUPPORTED), so that it can open its own and outlast the
 * transaction timeout; its job's outcome then commits in a short REQUIRES_NEW transaction after it.
 *
 * <p>A runtime exception of the work (a handler that throws) leaves as a checked {@link
 * CarriedFailure}, an application exception: the transaction still rolls back (marked here), but
 * the container neither logs it at ERROR as an unexpected failure (Liberty's CNTR0020E with an FFDC
 * incident, WildFly's WFLYEJB0034) nor wraps it. A failing job is an outcome, retried as usual, and
 * pgbus logs it itself. {@link JobTransactions} unwraps it.
 */
@Stateless
@LocalBean
public class JobTransactionBoundary {

  @Resource SessionContext context;
  @Inject PgbusResources resources;

  /** A runtime exception of the work, carried across the EJB call as a checked one. */
  public static final class CarriedFailure extends Exception {
    private static final long serialVersionUID = 1L;

    CarriedFailure(RuntimeException failure) {
      super(failure.getMessage(), failure);
    }

    /** The runtime exception the work threw. */
    public RuntimeException failure() {
      return (RuntimeException) getCause();
    }
  }

  @TransactionAttribute(TransactionAttributeType.REQUIRES_NEW)
  public <T> T inNewTransaction(Transactions.Work<T> work) throws Exception {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.run(c);
    } catch (RuntimeException e) {
      context.setRollbackOnly();
      throw new CarriedFailure(e);
    } catch (Exception e) {
      // A checked exception would otherwise commit: an application exception does not roll back.
      context.setRollbackOnly();
      throw e;
    }
  }

  @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
  public <T> T outsideTransaction(Transactions.Unbound<T> work) throws Exception {
    try {
      return work.run();
    } catch (RuntimeException e) {
      throw new CarriedFailure(e);
    }
  }
}

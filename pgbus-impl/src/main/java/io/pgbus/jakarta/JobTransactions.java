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
 * Runs each job in a new container-managed JTA transaction. The connection handed to the engine
 * comes from the JTA datasource, so it is enlisted in that transaction: the job's completion
 * commits together with whatever the handler wrote through the same datasource.
 *
 * <p>A {@link io.pgbus.JobTransaction#HANDLER} handler runs through {@link #outsideTransaction}
 * instead, with no transaction at all (NOT_SUPPORTED), so that it can open its own and outlast the
 * transaction timeout; its job's outcome then commits in a short REQUIRES_NEW transaction after it.
 */
@Stateless
@LocalBean
public class JobTransactions implements Transactions {

  @Resource SessionContext context;
  @Inject PgbusResources resources;

  @Override
  @TransactionAttribute(TransactionAttributeType.REQUIRES_NEW)
  public <T> T inNewTransaction(Work<T> work) throws Exception {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.run(c);
    } catch (Exception e) {
      // A checked exception would otherwise commit: an application exception does not roll back.
      context.setRollbackOnly();
      throw e;
    }
  }

  @Override
  @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
  public <T> T outsideTransaction(Unbound<T> work) throws Exception {
    return work.run();
  }
}

package io.pgbus.engine;

import java.sql.Connection;

/**
 * Port: runs work in a new transaction and hands it a connection enlisted in that transaction. The
 * work's return commits; a throw rolls back and is rethrown. Java SE uses {@link JdbcTransactions};
 * a Jakarta EE container uses a REQUIRES_NEW JTA transaction.
 */
public interface Transactions {

  /** Work done inside one transaction. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection connection) throws Exception;
  }

  <T> T inNewTransaction(Work<T> work) throws Exception;

  /** Work done outside any transaction. */
  @FunctionalInterface
  interface Unbound<T> {
    T run() throws Exception;
  }

  /**
   * Runs work with the calling thread's transaction, if any, suspended: the handler of a {@link
   * io.pgbus.JobTransaction#HANDLER} job, which opens its own. Java SE has no ambient transaction,
   * so the default just runs it; a container uses a NOT_SUPPORTED method.
   */
  default <T> T outsideTransaction(Unbound<T> work) throws Exception {
    return work.run();
  }
}

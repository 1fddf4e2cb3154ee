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
}

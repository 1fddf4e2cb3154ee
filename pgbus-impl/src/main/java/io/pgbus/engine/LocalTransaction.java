package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One local transaction on an autocommit connection, which is autocommit again afterwards. The
 * start-up writes of limits use it: each holds its row's lock until the commit, so two engines
 * starting at once compare builds one after the other (V26, the newest build wins).
 */
final class LocalTransaction {

  /** Work on one connection that throws what JDBC throws. */
  @FunctionalInterface
  interface Work<T> {
    T run() throws SQLException;
  }

  private LocalTransaction() {}

  static <T> T run(Connection c, Work<T> work) throws SQLException {
    c.setAutoCommit(false);
    try {
      T result = work.run();
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Makes several statements one unit on any connection: in the caller's transaction when there is
 * one, else (an auto-commit connection: {@code JobQueue.cancel} or an admin action called outside a
 * transaction, a failure recorded after the handler's transaction rolled back) in a local
 * transaction of their own. A job's final state and its report to its batch and dependents
 * (pgbus.job_finished) must commit together: apart, a crash between the two left dependents waiting
 * for good on a job that had died.
 */
final class Atomic {

  @FunctionalInterface
  interface Work<T> {
    T run() throws SQLException;
  }

  private Atomic() {}

  static <T> T run(Connection c, Work<T> work) throws SQLException {
    if (!c.getAutoCommit()) {
      return work.run();
    }
    c.setAutoCommit(false);
    T result;
    try {
      result = work.run();
      c.commit();
    } catch (SQLException | RuntimeException | Error e) {
      // On a dead connection these fail too: what failed first is what the caller must see.
      try {
        c.rollback();
        c.setAutoCommit(true);
      } catch (SQLException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    }
    c.setAutoCommit(true);
    return result;
  }
}

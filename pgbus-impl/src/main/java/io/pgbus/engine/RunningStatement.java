package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.PGConnection;

/**
 * The job transaction's connection, as seen by the {@link Watchdog}: an interrupt does not reach a
 * handler blocked inside a SQL statement (a JDBC read is not interruptible), so a cancel or a
 * timeout also cancels the statement that connection is running, with PostgreSQL's cancel request
 * (pgjdbc's {@link PGConnection#cancelQuery}: a separate short connection that names the backend by
 * its pid and secret key; no privilege needed).
 *
 * <p>A cancel request hits whatever the backend runs when it arrives, so the {@link Watchdog} sends
 * it only while the attempt has not ended, under the attempt's lock: the handler's thread cannot
 * end the attempt, settle the job and hand the connection back to its pool before the request has
 * been delivered ({@code cancelQuery} returns once the server has taken it), and a request that
 * reaches an idle backend is dropped by the server.
 */
final class RunningStatement {

  private static final System.Logger LOG = System.getLogger(RunningStatement.class.getName());

  private final Connection connection;

  private RunningStatement(Connection connection) {
    this.connection = connection;
  }

  /**
   * The canceller of {@code c}'s statements, or null when there is no connection (a handler in its
   * own transactions). The connection is unwrapped to pgjdbc's only when a cancel comes: every job
   * gets one of these, few are ever cancelled.
   */
  static RunningStatement of(Connection c) {
    return c == null ? null : new RunningStatement(c);
  }

  /** Cancels the statement running now, if any; a failure is logged and changes nothing else. */
  void cancel(ClaimedJob job) {
    PGConnection pg;
    try {
      // A container's wrapper usually wraps pgjdbc's; one that does not leaves the interrupt alone.
      pg =
          connection.isWrapperFor(PGConnection.class)
              ? connection.unwrap(PGConnection.class)
              : null;
    } catch (SQLException | RuntimeException | LinkageError e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus cannot cancel the statements of a job connection ({0}); an interrupt alone stops"
              + " its handler",
          e.toString());
      return;
    }
    if (pg == null) {
      return;
    }
    try {
      pg.cancelQuery();
    } catch (SQLException | RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not cancel the SQL statement of {0}: {1}; its handler stops when the"
              + " statement returns",
          JobRunner.named(job),
          e.getMessage());
    }
  }
}

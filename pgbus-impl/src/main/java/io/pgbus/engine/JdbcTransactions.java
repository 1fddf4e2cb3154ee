package io.pgbus.engine;

import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * {@link Transactions} on plain JDBC: one connection, auto-commit off, commit or roll back. The
 * engine's own also sends the wakes of what the work enqueued after the commit ({@link
 * LocalAfterCommit}), and none after a rollback.
 */
public final class JdbcTransactions implements Transactions {
  private final DataSource dataSource;
  private final LocalAfterCommit afterCommit; // null: the database wakes

  public JdbcTransactions(DataSource dataSource) {
    this(dataSource, null);
  }

  JdbcTransactions(DataSource dataSource, LocalAfterCommit afterCommit) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.afterCommit = afterCommit;
  }

  @Override
  public <T> T inNewTransaction(Work<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      PendingWake wake = afterCommit == null ? null : afterCommit.begin(c);
      T result;
      try {
        result = work.run(c);
        c.commit();
      } catch (Throwable t) {
        // On a dead connection the rollback and the reset fail too; what failed first is what
        // the job's errors must show, so those only ride along as suppressed.
        try {
          c.rollback();
          c.setAutoCommit(true);
        } catch (Exception cleanupFailure) {
          t.addSuppressed(cleanupFailure);
        }
        throw t;
      } finally {
        if (wake != null) {
          afterCommit.ended(c);
        }
      }
      if (wake != null) {
        wake.committed();
      }
      c.setAutoCommit(true);
      return result;
    }
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;

/** {@link Transactions} on plain JDBC: one connection, auto-commit off, commit or roll back. */
public final class JdbcTransactions implements Transactions {
  private final DataSource dataSource;

  public JdbcTransactions(DataSource dataSource) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  @Override
  public <T> T inNewTransaction(Work<T> work) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
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
      }
      c.setAutoCommit(true);
      return result;
    }
  }
}

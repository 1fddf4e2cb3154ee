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
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (Throwable t) {
        try {
          c.rollback();
        } catch (Exception rollbackFailure) {
          t.addSuppressed(rollbackFailure);
        }
        throw t;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }
}

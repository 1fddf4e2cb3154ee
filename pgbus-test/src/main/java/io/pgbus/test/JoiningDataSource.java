package io.pgbus.test;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * What {@code jdbc/pgbus} is to a handler in the container, for a plain test: inside a job that a
 * {@link TestWorker} runs, {@code getConnection()} returns the job's own transaction (its close
 * does nothing), so the handler's writes commit exactly when the job completes; anywhere else, a
 * connection of the underlying DataSource.
 */
final class JoiningDataSource extends ConnectionSource {

  private final DataSource underlying;
  private final ThreadLocal<Connection> job = new ThreadLocal<>();

  JoiningDataSource(DataSource underlying) {
    this.underlying = underlying;
  }

  @Override
  public Connection getConnection() throws SQLException {
    Connection tx = job.get();
    return tx != null ? borrowed(tx) : underlying.getConnection();
  }

  /** Runs {@code work} with {@code tx} as the connection handed out on this thread. */
  <T> T joining(Connection tx, JobWork<T> work) throws Exception {
    Connection outer = job.get();
    job.set(tx);
    try {
      return work.run();
    } finally {
      if (outer == null) {
        job.remove();
      } else {
        job.set(outer);
      }
    }
  }

  /** A job's handler call. */
  @FunctionalInterface
  interface JobWork<T> {
    T run() throws Exception;
  }
}

package io.pgbus.engine;

import io.pgbus.BatchSummary;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;

/**
 * What a handler reads of its batch and dependencies ({@link io.pgbus.JobContext#batch()}, {@code
 * batchResults}, {@code dependencyResults}): read on demand, on the connection of the handler's own
 * transaction, which {@link JobRunner} makes current on the handler's thread for the call only. So
 * a job that never asks costs nothing.
 */
final class JobLinks {

  private static final LinkStore STORE = new LinkStore();
  private static final ThreadLocal<Connection> HANDLER = new ThreadLocal<>();

  private JobLinks() {}

  /** Makes {@code c} the handler's connection on this thread; returns the one it replaces. */
  static Connection enter(Connection c) {
    Connection previous = HANDLER.get();
    HANDLER.set(c);
    return previous;
  }

  static void restore(Connection previous) {
    if (previous == null) {
      HANDLER.remove();
    } else {
      HANDLER.set(previous);
    }
  }

  static Optional<BatchSummary> batch(long jobId) {
    return read(jobId, c -> STORE.batchOfCallback(c, jobId));
  }

  static SortedMap<Long, String> batchResults(long jobId, long afterJobId, int limit) {
    return read(jobId, c -> STORE.batchResults(c, jobId, afterJobId, limit));
  }

  static Map<Long, String> dependencyResults(long jobId) {
    return read(jobId, c -> STORE.dependencyResults(c, jobId));
  }

  private interface Read<T> {
    T run(Connection c) throws SQLException;
  }

  private static <T> T read(long jobId, Read<T> read) {
    Connection c = HANDLER.get();
    if (c == null) {
      throw new IllegalStateException(
          "pgbus job "
              + jobId
              + ": batch and dependency results are read on the handler's own thread, while it"
              + " runs; read them there and pass them on");
    }
    try {
      return read.run(c);
    } catch (SQLException e) {
      throw Failures.of(null, "read the batch or dependencies of job " + jobId, e);
    }
  }
}

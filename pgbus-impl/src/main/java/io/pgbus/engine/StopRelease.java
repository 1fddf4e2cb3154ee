package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The database side of an engine's stop: the jobs a drain could not finish go back to {@code
 * available} without spending an attempt, and each step says which in the stop log ({@link
 * StopLog}: JUL may have dropped its handlers while the JVM shuts down). When the database cannot
 * be reached the jobs keep their lease, and the leader rescues them.
 */
final class StopRelease {

  // The engine's logger: these are lines of its stop, and operators filter on it.
  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  private final EngineConfig config;
  private final DataSource dataSource;
  private final JobStore store;

  StopRelease(EngineConfig config, DataSource dataSource, JobStore store) {
    this.config = config;
    this.dataSource = dataSource;
    this.store = store;
  }

  /**
   * The last step of a stop: releases whatever this worker still has running in the database
   * (typically an attempt whose failure the stopping container would not let it record), and says
   * which. False when the database could not be reached: the node row then stays, goes stale, and
   * the leader rescues those jobs within one heartbeat TTL.
   */
  boolean whatStillRuns() {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Map<String, List<Long>> released = store.jobReleaseWorker(c, config.workerId());
      if (!released.isEmpty()) {
        StopLog.log(
            LOG,
            Level.WARNING,
            "pgbus engine {0} found jobs of its own still running at the end of its stop; released"
                + " them back to available without spending an attempt: {1}",
            config.workerId(),
            released);
      }
      return true;
    } catch (SQLException e) {
      StopLog.log(
          LOG,
          Level.WARNING,
          "pgbus engine {0} could not check for jobs of its own left running at the end of its"
              + " stop ({1}); its pgbus.node row stays, so the leader rescues any within one"
              + " heartbeat TTL ({2})",
          config.workerId(),
          e.getMessage(),
          ExecutionConfig.HEARTBEAT_TTL.key());
      return false;
    }
  }

  /** Releases what the capsules still held after the drain, and says which jobs went back. */
  void handBack(List<ClaimedJob> held) {
    Duration drain = config.execution().drainTimeout();
    if (held.isEmpty()) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Map<String, List<Long>> released = store.jobReleaseDrained(c, held);
      int n = released.values().stream().mapToInt(List::size).sum();
      StopLog.log(
          LOG,
          Level.WARNING,
          "pgbus engine {0} stopped with {1} job(s) still held after the {2} drain ({3}); released"
              + " {4} back to available without spending an attempt: {5}",
          config.workerId(),
          held.size(),
          Durations.format(drain),
          ExecutionConfig.DRAIN_TIMEOUT.key(),
          n,
          released);
    } catch (SQLException e) {
      StopLog.log(
          LOG,
          Level.WARNING,
          "pgbus engine {0} stopped with {1} job(s) still held after the {2} drain and could not"
              + " release them ({3}); lease rescue will return them: {4}",
          config.workerId(),
          held.size(),
          Durations.format(drain),
          e.getMessage(),
          held.stream().map(ClaimedJob::id).toList());
    }
  }
}

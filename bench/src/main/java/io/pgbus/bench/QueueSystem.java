package io.pgbus.bench;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/** A queue under test: pgbus's engine, or the raw pgjdbc baseline. */
interface QueueSystem {

  /** "pgbus" or "raw". */
  String name();

  /** Installs the system's schema in a fresh database. */
  void install(DataSource dataSource) throws Exception;

  /** Enqueues {@code count} no-op jobs in one statement, in {@code c}'s transaction; their ids. */
  long[] enqueueBatch(Connection c, String queue, int count) throws SQLException;

  /** Enqueues one no-op job in {@code c}'s transaction; its id. */
  long enqueueOne(Connection c, String queue) throws SQLException;

  /**
   * When the database began the claim of each of {@code ids} (its {@code now()}, on this machine's
   * wall clock), for the jobs whose row still says so; empty for a system that does not keep it
   * (raw deletes its jobs when done).
   */
  default Map<Long, Instant> claimedAt(Connection c, long[] ids) throws SQLException {
    return Map.of();
  }

  /**
   * Starts consumers on {@code queues}: for pgbus one capsule per queue with {@code slots} each,
   * for raw {@code slots} worker threads on the first queue.
   */
  Consumers start(
      BenchDatabase db, DataSource pool, List<String> queues, int slots, JobTracker tracker)
      throws Exception;

  /** Running consumers. */
  interface Consumers extends AutoCloseable {

    /** Waits until wake-ups are delivered (pgbus: the listener's self-probe came back). */
    void awaitReady(Duration timeout) throws Exception;

    /** The system's own counters (claims, empty claims, ...), for the evidence section. */
    Map<String, Long> counters();

    @Override
    void close();
  }
}

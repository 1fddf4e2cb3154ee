package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * All SQL on {@code pgbus.queue_limit} (V14): writing a queue's flow control, reading which queues
 * are limited, and the wake-up a finished job of a limited queue sends. Setting and clearing are
 * the SQL functions of R__flow.sql, so an operator can do the same from psql. Each method runs in
 * the caller's transaction.
 */
final class QueueLimitStore {

  private static final String SET =
      "SELECT pgbus.queue_limit_set(?, ?, ?, ?, ?, ?::float8 * interval '1 millisecond', ?, ?)";

  private static final String CLEAR = "SELECT pgbus.queue_limit_clear(?)";

  // A queue's fair share (V50), or none: the weights as two arrays made a JSON object in SQL, so
  // that a tenant's name needs no escaping here. Writes nothing when the row already says so.
  private static final String FAIR =
      "SELECT pgbus.queue_fair_set(?, ?, (SELECT pg_catalog.jsonb_object_agg(t, w)"
          + " FROM ROWS FROM (pg_catalog.unnest(?::text[]), pg_catalog.unnest(?::int[]))"
          + " AS x(t, w)), ?)";

  // The build that last wrote a queue's limits (V26), locked until the caller commits, so that two
  // engines starting at once compare against what the other wrote.
  private static final String WRITER =
      "SELECT build FROM pgbus.queue_limit WHERE queue::text OPERATOR(pg_catalog.=) ?::text"
          + " FOR UPDATE";

  private static final String MARK_WRITER =
      "UPDATE pgbus.queue_limit SET build = ?::text"
          + " WHERE queue::text OPERATOR(pg_catalog.=) ?::text"
          + " AND (build IS NULL OR build OPERATOR(pg_catalog.<>) ?::text)";

  private static final String LIMITED =
      "SELECT queue::text FROM pgbus.queue_limit WHERE queue::text = ANY (?::text[])";

  // A running job of a limited queue finished: the capsules that wait on the limit may claim
  // again. One notification per queue, delivered at commit (autocommit here).
  private static final String WAKE =
      "SELECT pgbus.notify(q::pgbus.queue_name, now()) FROM pg_catalog.unnest(?::text[]) AS q";

  // What the doctor, readiness and the admin API show: every limited queue, its limits, how many
  // executions it has (the lanes of its running jobs, what the global limit counts), and how many
  // due jobs wait while it is at its global limit (waiting on the limit) or below it (waiting on a
  // worker). Counts over the partial indexes, the waiting ones capped at COUNT_CAP per queue
  // (readiness runs it too); off the hot path.
  private static final String STATUS =
      """
      SELECT l.queue::text, l.global_concurrency, coalesce(l.key_concurrency, 1),
             pgbus.claim_executions(l.queue::text) AS running,
             (SELECT count(*) FROM (
                SELECT 1 FROM pgbus.job w
                 WHERE w.queue::text = l.queue::text
                   AND w.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
                   AND w.run_at <= now()
                 LIMIT ?) d) AS due,
             (SELECT count(*) FROM (
                SELECT 1 FROM pgbus.job w
                 WHERE w.queue::text = l.queue::text
                   AND w.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
                   AND w.run_at <= now() AND w.concurrency_key IS NOT NULL
                   AND ((SELECT count(*) FROM pgbus.job k
                          WHERE k.queue::text = l.queue::text AND k.concurrency_key::text = w.concurrency_key::text
                            AND k.state OPERATOR(pg_catalog.=) 'running')
                        >= coalesce(l.key_concurrency, 1)
                        -- FIFO: behind an older job of its key that waits or (unless skipped)
                        -- lies dead, as pgbus.claim decides (R__claim.sql).
                        OR l.key_fifo AND EXISTS (
                             SELECT 1 FROM pgbus.job o
                              WHERE o.queue::text = l.queue::text AND o.concurrency_key::text = w.concurrency_key::text
                                AND o.id < w.id
                                AND o.state OPERATOR(pg_catalog.=)
                                      ANY ('{available,scheduled,retryable,dead}')
                                AND (o.state OPERATOR(pg_catalog.<>) 'dead'
                                     OR NOT l.key_fifo_skip_dead)))
                 LIMIT ?) b) AS key_blocked,
             l.rate_limit,
             -- extract gives numeric: times a numeric, or pg_catalog has no exact operator.
             (extract(epoch FROM l.rate_window) * 1000::numeric)::bigint AS rate_window_ms,
             CASE WHEN l.rate_limit IS NULL THEN 0
                  ELSE l.rate_limit - greatest(0, pgbus.rate_left(
                         l.rate_limit, l.rate_window_start, l.rate_count,
                         pgbus.rate_window_start(l.rate_window))) END AS starts,
             l.key_fifo, l.key_fifo_skip_dead
        FROM pgbus.queue_limit l
       ORDER BY l.queue
      """;

  /** The most waiting jobs the status counts per queue. */
  static final int COUNT_CAP = 10_000;

  /**
   * Writes a queue's limits as {@code build} configures them, unless a newer build wrote them: the
   * newest build wins (docs/schema.md, "Flow control"). Returns the newer build whose limits were
   * kept, or null when this one's were written. In the caller's transaction, which holds the row's
   * lock until it commits.
   */
  BuildVersion queueLimitPublish(
      Connection c, QueueLimit limit, FairShare fair, BuildVersion build, String by)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(WRITER)) {
      ps.setString(1, limit.queue());
      try (ResultSet rs = ps.executeQuery()) {
        String writer = rs.next() ? rs.getString(1) : null;
        if (writer != null && build.olderThan(BuildVersion.parse(writer))) {
          return BuildVersion.parse(writer);
        }
      }
    }
    queueFairWrite(c, limit.queue(), fair, by);
    queueLimitWrite(c, limit, by);
    try (PreparedStatement ps = c.prepareStatement(MARK_WRITER)) {
      ps.setString(1, build.toString());
      ps.setString(2, limit.queue());
      ps.setString(3, build.toString());
      ps.executeUpdate();
    }
    return null;
  }

  /** Writes a queue's limits, or removes them when {@code limit} sets none. */
  void queueLimitWrite(Connection c, QueueLimit limit, String by) throws SQLException {
    if (limit.isEmpty()) {
      try (PreparedStatement ps = c.prepareStatement(CLEAR)) {
        ps.setString(1, limit.queue());
        ps.executeQuery().close();
      }
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(SET)) {
      ps.setString(1, limit.queue());
      ps.setObject(2, limit.globalConcurrency(), Types.INTEGER);
      ps.setObject(3, limit.keyConcurrency(), Types.INTEGER);
      ps.setString(4, by);
      ps.setObject(5, limit.rateLimit(), Types.INTEGER);
      if (limit.rateWindow() == null) {
        ps.setNull(6, Types.DOUBLE);
      } else {
        ps.setDouble(6, limit.rateWindow().toNanos() / 1e6);
      }
      ps.setBoolean(7, limit.fifo());
      ps.setBoolean(8, limit.fifoSkipsDead());
      ps.executeQuery().close();
    }
  }

  /**
   * Writes a queue's fair share, or removes it when {@code fair} is null. Before {@link
   * #queueLimitWrite}: clearing the limits keeps the row of a fair queue and removes the row of a
   * queue that just stopped being fair.
   */
  void queueFairWrite(Connection c, String queue, FairShare fair, String by) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(FAIR)) {
      ps.setString(1, queue);
      ps.setString(2, fair == null ? null : "concurrency_key");
      var tenants = new ArrayList<String>();
      var weights = new ArrayList<Integer>();
      if (fair != null) {
        fair.weights()
            .forEach(
                (t, w) -> {
                  tenants.add(t);
                  weights.add(w);
                });
      }
      ps.setArray(3, c.createArrayOf("text", tenants.toArray()));
      ps.setArray(4, c.createArrayOf("integer", weights.toArray()));
      ps.setString(5, by);
      ps.executeQuery().close();
    }
  }

  /** Which of {@code queues} the database limits. */
  Set<String> queuesLimited(Connection c, Collection<String> queues) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LIMITED)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray()));
      var out = new TreeSet<String>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
      return out;
    }
  }

  /** Sends each queue's wake-up at commit. */
  void queueWake(Connection c, Collection<String> queues) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(WAKE)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray()));
      ps.executeQuery().close();
    }
  }

  /** Every limited queue with its limits and what waits on them. */
  List<QueueLimitStatus> queueLimitStatus(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(STATUS)) {
      ps.setInt(1, COUNT_CAP);
      ps.setInt(2, COUNT_CAP);
      return status(ps);
    }
  }

  private static List<QueueLimitStatus> status(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      var out = new ArrayList<QueueLimitStatus>();
      while (rs.next()) {
        Integer global = (Integer) rs.getObject(2);
        long running = rs.getLong(4);
        long due = rs.getLong(5);
        long keyBlocked = rs.getLong(6);
        Integer rate = (Integer) rs.getObject(7);
        long windowMs = rs.getLong(8);
        long starts = rs.getLong(9);
        boolean atLimit = global != null && running >= global || rate != null && starts >= rate;
        long onLimit = atLimit ? due : Math.min(due, keyBlocked);
        out.add(
            new QueueLimitStatus(
                rs.getString(1),
                global,
                rs.getInt(3),
                running,
                onLimit,
                due - onLimit,
                rate,
                rate == null ? null : Duration.ofMillis(windowMs),
                starts,
                rs.getBoolean(10),
                rs.getBoolean(11)));
      }
      return out;
    }
  }
}

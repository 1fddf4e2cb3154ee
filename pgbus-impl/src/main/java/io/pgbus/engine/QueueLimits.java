package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * An operator's live change of a queue's flow control (the admin API's {@code POST
 * queues/{queue}/limit}, the console's limit form): the limits before, the write through
 * pgbus.queue_limit_set or _clear (R__flow.sql, the same checks as psql gets), the limits after,
 * and, when they differ, an audit row (action {@code limit}, V37) with both, all in the caller's
 * transaction. The row is locked from the first read, so two operators changing one queue at once
 * each record what they really replaced. The change holds for the whole fleet at once (the triggers
 * of pgbus.queue_limit wake every engine's flow control) until an engine that reads the queue
 * starts again and writes its configured limits over it (docs/schema.md, "Flow control").
 */
public final class QueueLimits {

  /** The most audit entries {@link #history} returns. */
  public static final int MAX_HISTORY = 100;

  /**
   * What a change did.
   *
   * @param queue the queue
   * @param before its limits before, or null when it had no row
   * @param after its limits after, or null when the row went (a queue whose waiting jobs carry
   *     concurrency keys keeps a row with no global limit and a key limit of 1)
   */
  public record Change(String queue, QueueLimit before, QueueLimit after) {

    /** Whether anything changed (and an audit row was written). */
    public boolean changed() {
      return !Objects.equals(before, after);
    }
  }

  /**
   * One audited change of a queue's limits.
   *
   * @param at when it committed (the transaction's time)
   * @param actor who made it
   * @param detail {@code {"before": {...} | null, "after": {...} | null}} as JSON text, the limits
   *     as the admin API writes them
   */
  public record Entry(Instant at, String actor, String detail) {}

  // Each fair queue with each weighted tenant (a row with NULLs for one without weights).
  private static final String FAIR =
      """
      SELECT l.queue::text, w.key, w.value::integer
        FROM pgbus.queue_limit l
        LEFT JOIN LATERAL pg_catalog.jsonb_each_text(l.fair_weights) w ON true
       WHERE l.fair_key IS NOT NULL
       ORDER BY l.queue, w.key
      """;

  // The row as it stands, locked until the caller commits.
  private static final String READ =
      """
      SELECT global_concurrency, key_concurrency, rate_limit,
             (extract(epoch FROM rate_window) * 1000::numeric)::bigint, key_fifo, key_fifo_skip_dead
        FROM pgbus.queue_limit WHERE queue::text OPERATOR(pg_catalog.=) ?::text FOR UPDATE
      """;

  private static final String AUDIT =
      """
      INSERT INTO pgbus.audit (actor, action, queue, detail)
      VALUES (coalesce(nullif(?::text, ''), session_user::text), 'limit', ?::text,
              pg_catalog.jsonb_build_object('before', ?::jsonb, 'after', ?::jsonb))
      """;

  // Newest first: one range of audit_queue_idx (queue, id).
  private static final String HISTORY =
      """
      SELECT at, actor, detail::text FROM pgbus.audit
       WHERE queue OPERATOR(pg_catalog.=) ?::text AND action OPERATOR(pg_catalog.=) 'limit'
       ORDER BY id DESC LIMIT ?
      """;

  private final QueueLimitStore store = new QueueLimitStore();

  /**
   * Replaces {@code wanted.queue()}'s limits with {@code wanted} (none set: removes them), audited
   * as {@code actor}, in the caller's transaction on {@code c}.
   */
  public Change change(Connection c, QueueLimit wanted, String actor) throws SQLException {
    QueueLimit before = read(c, wanted.queue());
    store.queueLimitWrite(c, wanted, actor);
    QueueLimit after = read(c, wanted.queue());
    var change = new Change(wanted.queue(), before, after);
    if (change.changed()) {
      try (PreparedStatement ps = c.prepareStatement(AUDIT)) {
        ps.setString(1, actor);
        ps.setString(2, wanted.queue());
        ps.setString(3, json(before));
        ps.setString(4, json(after));
        ps.executeUpdate();
      }
    }
    return change;
  }

  /** The queue's limits as stored, or null when it has none. */
  public QueueLimit read(Connection c, String queue) throws SQLException {
    QueueNames.require(queue);
    try (PreparedStatement ps = c.prepareStatement(READ)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        long windowMs = rs.getLong(4);
        Duration window = rs.wasNull() ? null : Duration.ofMillis(windowMs);
        return new QueueLimit(
            queue,
            (Integer) rs.getObject(1),
            (Integer) rs.getObject(2),
            (Integer) rs.getObject(3),
            window,
            rs.getBoolean(5),
            rs.getBoolean(6));
      }
    }
  }

  /**
   * The fair share of every fair queue as stored (V50, {@code pgbus.queue_fair_set}), by queue:
   * what the doctor, the deploy check and the admin API's limit card show.
   */
  public Map<String, FairShare> fairShares(Connection c) throws SQLException {
    var weights = new TreeMap<String, Map<String, Integer>>();
    try (PreparedStatement ps = c.prepareStatement(FAIR);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        var w = weights.computeIfAbsent(rs.getString(1), q -> new LinkedHashMap<>());
        if (rs.getString(2) != null) {
          w.put(rs.getString(2), rs.getInt(3));
        }
      }
    }
    var out = new TreeMap<String, FairShare>();
    weights.forEach((q, w) -> out.put(q, new FairShare(q, w)));
    return out;
  }

  /** The queue's latest audited limit changes, newest first, at most {@code limit}. */
  public List<Entry> history(Connection c, String queue, int limit) throws SQLException {
    QueueNames.require(queue);
    try (PreparedStatement ps = c.prepareStatement(HISTORY)) {
      ps.setString(1, queue);
      ps.setInt(2, Math.min(Math.max(limit, 1), MAX_HISTORY));
      var out = new ArrayList<Entry>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Entry(rs.getTimestamp(1).toInstant(), rs.getString(2), rs.getString(3)));
        }
      }
      return out;
    }
  }

  /**
   * The limits as JSON, named as the admin API names them: {@code globalConcurrency}, {@code
   * keyConcurrency} (null: 1), {@code rateLimit}, {@code rateWindowMs}, {@code keyFifo}, {@code
   * keyFifoSkipDead}; null for none.
   */
  static String json(QueueLimit l) {
    if (l == null) {
      return null;
    }
    return "{\"globalConcurrency\":"
        + l.globalConcurrency()
        + ",\"keyConcurrency\":"
        + l.keyConcurrency()
        + ",\"rateLimit\":"
        + l.rateLimit()
        + ",\"rateWindowMs\":"
        + (l.rateWindow() == null ? null : l.rateWindow().toMillis())
        + ",\"keyFifo\":"
        + l.fifo()
        + ",\"keyFifoSkipDead\":"
        + l.fifoSkipsDead()
        + "}";
  }
}

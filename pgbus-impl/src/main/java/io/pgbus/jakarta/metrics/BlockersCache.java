package io.pgbus.jakarta.metrics;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Runnable-now and blocked-by-cause per queue (pgbus.queue_blockers, docs/explain.md), read at most
 * once per {@code maxAge} and only when a scrape asks: one statement per queue of this application
 * on one connection, nothing while nobody scrapes. Public for the OpenTelemetry adapter; it refers
 * to no MP Metrics type.
 */
public final class BlockersCache {

  /** The causes a gauge is registered for, in pgbus.queue_blockers's order. */
  public static final List<String> CAUSES =
      List.of(
          "waiting_on_dependencies",
          "retry_backoff",
          "due_later",
          "queue_paused",
          "key_limit",
          "fifo_head_blocked",
          "rate_window_spent",
          "global_limit");

  private static final String BLOCKERS =
      "SELECT b.cause, b.runnable_now, b.jobs FROM pgbus.queue_blockers(?::text) b";

  private final DataSource dataSource;
  private final List<String> queues;
  private final MaxAge maxAge;
  private Map<String, Long> counts = Map.of();

  public BlockersCache(DataSource dataSource, List<String> queues, Duration maxAge) {
    this.dataSource = dataSource;
    this.queues = List.copyOf(queues);
    this.maxAge = new MaxAge(maxAge);
  }

  /** Jobs of {@code queue} a free slot would claim now. */
  public synchronized long runnableNow(String queue) {
    return read(queue + "/");
  }

  /** Waiting jobs of {@code queue} that {@code cause} holds back. */
  public synchronized long blocked(String queue, String cause) {
    return read(queue + "/" + cause);
  }

  private long read(String key) {
    if (this.maxAge.due()) {
      refresh();
    }
    return counts.getOrDefault(key, 0L);
  }

  private void refresh() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(BLOCKERS)) {
      var fresh = new HashMap<String, Long>();
      for (String q : queues) {
        ps.setString(1, q);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            String cause = rs.getString(1);
            fresh.put(
                q + "/" + (cause == null ? "" : cause),
                cause == null ? rs.getLong(2) : rs.getLong(3));
          }
        }
      }
      counts = fresh;
    } catch (Exception e) {
      // Keep the last counts; the next scrape after maxAge tries again.
    }
  }
}

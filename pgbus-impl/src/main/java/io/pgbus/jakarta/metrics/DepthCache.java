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
 * Queue depth by state, read with one grouped count at most once per {@code maxAge} and only when a
 * scrape asks: an idle server that nobody scrapes pays nothing, and a scrape storm pays once.
 * Public for the OpenTelemetry adapter; it refers to no MP Metrics type.
 */
public final class DepthCache {

  private static final String DEPTH =
      """
      SELECT queue, state::text, count(*) FROM pgbus.job
       WHERE queue::text = ANY(?::text[])
         AND state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,running,retryable,dead}')
       GROUP BY 1, 2
      """;

  private final DataSource dataSource;
  private final List<String> queues;
  private final MaxAge maxAge;
  private Map<String, Long> counts = Map.of();

  public DepthCache(DataSource dataSource, List<String> queues, Duration maxAge) {
    this.dataSource = dataSource;
    this.queues = List.copyOf(queues);
    this.maxAge = new MaxAge(maxAge);
  }

  public synchronized long depth(String queue, String state) {
    if (this.maxAge.due()) {
      refresh();
    }
    return counts.getOrDefault(queue + "/" + state, 0L);
  }

  private void refresh() {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(DEPTH)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray(String[]::new)));
      var fresh = new HashMap<String, Long>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          fresh.put(rs.getString(1) + "/" + rs.getString(2), rs.getLong(3));
        }
      }
      counts = fresh;
    } catch (Exception e) {
      // Keep the last counts; the next scrape after maxAge tries again.
    }
  }
}

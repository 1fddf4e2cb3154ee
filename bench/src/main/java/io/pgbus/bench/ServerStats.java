package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads the server's own counters for one database: statements by kind (pg_stat_statements),
 * committed transactions (pg_stat_database), WAL flushes (pg_stat_wal, cluster-wide) and
 * connections (pg_stat_activity). Every read runs on the admin database, so the bench's own
 * measuring never shows up in the database it measures.
 */
final class ServerStats {

  private static final String STATEMENTS =
      """
      SELECT query, calls, total_exec_time FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = ?)
      """;

  private static final String XACT = "SELECT xact_commit FROM pg_stat_database WHERE datname = ?";

  private static final String WAL = "SELECT wal_records, wal_write, wal_sync FROM pg_stat_wal";

  private static final String ACTIVITY =
      """
      SELECT coalesce(nullif(application_name, ''), '?'), count(*) FROM pg_stat_activity
       WHERE datname = ? AND backend_type = 'client backend'
       GROUP BY 1
      """;

  /** Counters at one instant. */
  record Snapshot(
      long nanos,
      Map<String, long[]> statements,
      long xactCommit,
      long walRecords,
      long walWrites,
      long walSyncs) {

    /** Calls by kind since {@code before}. */
    Map<StatementKind, Long> callsSince(Snapshot before) {
      var out = new EnumMap<StatementKind, Long>(StatementKind.class);
      statements.forEach(
          (q, v) -> {
            long[] b = before.statements.get(q);
            long d = v[0] - (b == null ? 0 : b[0]);
            if (d > 0) {
              out.merge(StatementKind.of(q), d, Long::sum);
            }
          });
      return out;
    }

    /** Calls and total execution time (ms) by query text since {@code before}, busiest first. */
    Map<String, double[]> queriesSince(Snapshot before) {
      var out = new LinkedHashMap<String, double[]>();
      statements.entrySet().stream()
          .map(
              e -> {
                long[] b = before.statements.get(e.getKey());
                long calls = e.getValue()[0] - (b == null ? 0 : b[0]);
                double ms = (e.getValue()[1] - (b == null ? 0 : b[1])) / 1000.0;
                return Map.entry(e.getKey(), new double[] {calls, ms});
              })
          .filter(e -> e.getValue()[0] > 0)
          .sorted((a, b) -> Double.compare(b.getValue()[0], a.getValue()[0]))
          .forEach(e -> out.put(e.getKey(), e.getValue()));
      return out;
    }

    double seconds(Snapshot before) {
      return (nanos - before.nanos) / 1e9;
    }
  }

  private final BenchServer server;

  ServerStats(BenchServer server) {
    this.server = server;
  }

  /**
   * A snapshot once the backends of {@code pool} have reported everything: before PostgreSQL 15 a
   * backend sends its transaction and WAL counts at most every 500 ms and only when it ends a
   * transaction, so an idle pooled connection can sit on them indefinitely. Closing the pool ends
   * those backends, which flushes their counts; the statistics collector then needs a moment.
   * (pg_stat_statements counts at once and needs none of this.)
   */
  static Snapshot settled(
      ServerStats stats, BenchDatabase db, com.zaxxer.hikari.HikariDataSource pool)
      throws SQLException {
    pool.close();
    try {
      Thread.sleep(700);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return stats.snapshot(db.name());
  }

  Snapshot snapshot(String database) throws SQLException {
    try (Connection c = server.admin()) {
      // Each query below is its own transaction, so each sees fresh statistics.
      var statements = new LinkedHashMap<String, long[]>();
      if (server.statements()) {
        try (PreparedStatement ps = c.prepareStatement(STATEMENTS)) {
          ps.setString(1, database);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              // total_exec_time in microseconds, so one long array holds both.
              statements.merge(
                  rs.getString(1),
                  new long[] {rs.getLong(2), Math.round(rs.getDouble(3) * 1000)},
                  (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
            }
          }
        }
      }
      long xact;
      try (PreparedStatement ps = c.prepareStatement(XACT)) {
        ps.setString(1, database);
        try (ResultSet rs = ps.executeQuery()) {
          xact = rs.next() ? rs.getLong(1) : 0;
        }
      }
      long records = -1;
      long writes = -1;
      long syncs = -1;
      try (PreparedStatement ps = c.prepareStatement(WAL);
          ResultSet rs = ps.executeQuery()) {
        if (rs.next()) {
          records = rs.getLong(1);
          writes = rs.getLong(2);
          syncs = rs.getLong(3);
        }
      } catch (SQLException olderServer) {
        // pg_stat_wal is there from PostgreSQL 14 on.
      }
      return new Snapshot(System.nanoTime(), statements, xact, records, writes, syncs);
    }
  }

  /** Client connections to the database, by application_name. */
  Map<String, Long> connections(String database) throws SQLException {
    try (Connection c = server.admin();
        PreparedStatement ps = c.prepareStatement(ACTIVITY)) {
      ps.setString(1, database);
      var out = new LinkedHashMap<String, Long>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getString(1), rs.getLong(2));
        }
      }
      return out;
    }
  }
}

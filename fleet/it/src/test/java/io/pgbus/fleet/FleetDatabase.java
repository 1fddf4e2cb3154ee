package io.pgbus.fleet;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The fleet's PostgreSQL, as the test sees it: a fresh database per run, the application's table,
 * enqueues through pgbus's SQL API, and the queries the checks are made of (bind parameters only).
 */
final class FleetDatabase {

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  /**
   * The handler's business table: one row per attempt that committed. No unique key on purpose: a
   * job that commits twice must show up as two rows, not as a failed attempt.
   */
  private static final String BUSINESS_TABLE =
      """
      CREATE TABLE fleet_run (
        job_id    bigint NOT NULL,
        queue     text NOT NULL,
        attempt   integer NOT NULL,
        server    text NOT NULL,
        pid       bigint NOT NULL,
        committed timestamptz NOT NULL DEFAULT clock_timestamp()
      );
      CREATE INDEX fleet_run_job_idx ON fleet_run (job_id)
      """;

  // One statement per batch: pgbus.enqueue_many with arrays of n equal elements.
  private static final String ENQUEUE =
      """
      SELECT count(*) FROM pgbus.enqueue_many(
        array_fill(?::text, ARRAY[?]), array_fill(?::jsonb, ARRAY[?]),
        array_fill(NULL::timestamptz, ARRAY[?]), array_fill(0, ARRAY[?]), array_fill(25, ARRAY[?]))
      """;

  private final FleetSettings settings;

  FleetDatabase(FleetSettings settings) {
    this.settings = settings;
    if (!IDENTIFIER.matcher(settings.dbName()).matches()) {
      // It goes into DDL text: CREATE/DROP DATABASE take no bind parameters.
      throw new IllegalArgumentException(
          "fleet.db.name must match " + IDENTIFIER + ", was '" + settings.dbName() + "'");
    }
  }

  private String url(String db) {
    return "jdbc:postgresql://"
        + settings.dbHost()
        + ":"
        + settings.dbPort()
        + "/"
        + db
        + "?ApplicationName=pgbus-fleet-test";
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(settings.dbName()), settings.dbUser(), "");
  }

  /**
   * Drops and creates the database (ending sessions an aborted run left), with the business table.
   */
  void recreate() throws SQLException {
    try (Connection c = DriverManager.getConnection(url("postgres"), settings.dbUser(), "");
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS \"" + settings.dbName() + "\" WITH (FORCE)");
      s.execute("CREATE DATABASE \"" + settings.dbName() + "\"");
    }
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.execute(BUSINESS_TABLE);
    }
  }

  /** Enqueues {@code n} jobs whose handler works {@code sleepMs} each, in batches of 1000. */
  void enqueue(String queue, int n, int sleepMs) throws SQLException {
    try (Connection c = connect()) {
      enqueue(c, queue, n, sleepMs);
    }
  }

  /** As {@link #enqueue(String, int, int)}, on the caller's connection (a steady producer's). */
  static void enqueue(Connection c, String queue, int n, int sleepMs) throws SQLException {
    String payload = "{\"sleepMs\": " + sleepMs + "}";
    try (PreparedStatement ps = c.prepareStatement(ENQUEUE)) {
      for (int done = 0; done < n; ) {
        int batch = Math.min(1000, n - done);
        ps.setString(1, queue);
        ps.setInt(2, batch);
        ps.setString(3, payload);
        for (int i = 4; i <= 7; i++) {
          ps.setInt(i, batch);
        }
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          if (rs.getLong(1) != batch) {
            throw new AssertionError(
                "enqueue_many returned " + rs.getLong(1) + " ids for " + batch);
          }
        }
        done += batch;
      }
    }
  }

  /** The single number a query returns (0 for no row or NULL). */
  long count(String sql, Object... params) throws SQLException {
    Object v = value(sql, params);
    return v == null ? 0 : ((Number) v).longValue();
  }

  Object value(String sql, Object... params) throws SQLException {
    List<List<Object>> rows = rows(sql, params);
    return rows.isEmpty() ? null : rows.get(0).get(0);
  }

  List<List<Object>> rows(String sql, Object... params) throws SQLException {
    try (Connection c = connect()) {
      return rows(c, sql, params);
    }
  }

  static List<List<Object>> rows(Connection c, String sql, Object... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        int cols = rs.getMetaData().getColumnCount();
        List<List<Object>> rows = new ArrayList<>();
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= cols; i++) {
            row.add(rs.getObject(i));
          }
          rows.add(row);
        }
        return rows;
      }
    }
  }

  void execute(String sql, Object... params) throws SQLException {
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.execute();
    }
  }
}

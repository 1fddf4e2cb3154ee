package io.pgbus.bench;

import io.pgbus.engine.Channels;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The running demo server (./run-demo) that W5 measures, seen from outside as another application
 * would see it: its database, where jobs are enqueued and where the demo's handler writes one
 * {@code demo_greeting} row per job with the moment it started, and its HTTP root for readiness.
 */
final class DemoServer {

  /**
   * What the database says about one job the demo ran: when its claim began, when its handler
   * started.
   */
  record Started(Instant claimedAt, Instant handlerStartedAt) {}

  private static final Pattern HOST_PORT = Pattern.compile("jdbc:postgresql://([^/?]*)");
  private static final Pattern CPU_TIME =
      Pattern.compile("(?m)^cpu_processCpuTime_seconds(?:\\{[^}]*\\})? ([0-9.eE+-]+)");

  private final String jdbcUrl;
  private final String httpRoot;

  DemoServer(String jdbcUrl, String httpRoot) {
    this.jdbcUrl = jdbcUrl;
    this.httpRoot = httpRoot;
  }

  String jdbcUrl() {
    return jdbcUrl;
  }

  /** "host:port" of a JDBC URL, to tell whether two URLs name the same server. */
  static String hostPort(String url) {
    Matcher m = HOST_PORT.matcher(url == null ? "" : url);
    if (!m.find()) {
      return "?";
    }
    String hp = m.group(1).replace("localhost", "127.0.0.1");
    return hp.contains(":") ? hp : hp + ":5432";
  }

  /** A dedicated connection in auto-commit, as another application's. */
  Connection connect(String applicationName) throws SQLException {
    var p = new Properties();
    p.setProperty("ApplicationName", applicationName);
    return DriverManager.getConnection(jdbcUrl, p);
  }

  /**
   * Waits until the demo can be measured: its readiness is UP (when the HTTP root is known), its
   * schema has {@code demo_greeting.handler_started_at} (a demo older than W5 lacks it), and its
   * listener is connected. Throws with what is missing.
   */
  void awaitReady(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    String missing;
    while ((missing = notReady()) != null) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "W5: the demo server is not ready after " + timeout + ": " + missing);
      }
      Sleep.millis(500);
    }
  }

  private String notReady() {
    if (httpRoot != null) {
      String health = httpRoot + "/health/ready";
      try {
        HttpResponse<String> r =
            HttpClient.newHttpClient()
                .send(
                    HttpRequest.newBuilder(URI.create(health))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200 || !r.body().contains("\"UP\"")) {
          return health + " answered " + r.statusCode() + ": " + r.body();
        }
      } catch (IOException e) {
        return health + " unreachable: " + e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "interrupted";
      }
    }
    try (Connection c = connect("bench-w5-check");
        Statement st = c.createStatement();
        PreparedStatement listeners =
            c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND application_name = ?")) {
      try (ResultSet rs =
          st.executeQuery(
              "SELECT count(*) FROM information_schema.columns WHERE table_name = 'demo_greeting'"
                  + " AND column_name = 'handler_started_at'")) {
        rs.next();
        if (rs.getLong(1) == 0) {
          return "demo_greeting.handler_started_at does not exist in "
              + jdbcUrl
              + " (a demo older than W5, or not started yet)";
        }
      }
      listeners.setString(1, Channels.LISTENER_APPLICATION_NAME);
      try (ResultSet rs = listeners.executeQuery()) {
        rs.next();
        if (rs.getLong(1) == 0) {
          return "no " + Channels.LISTENER_APPLICATION_NAME + " connection on " + jdbcUrl;
        }
      }
      return null;
    } catch (SQLException e) {
      return "database " + jdbcUrl + ": " + e.getMessage();
    }
  }

  /**
   * The server JVM's CPU time in nanoseconds, from its MicroProfile Metrics base metric {@code
   * cpu.processCpuTime}; -1 when there is no HTTP root or no such metric.
   */
  long cpuNanos() {
    if (httpRoot == null) {
      return -1;
    }
    try {
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(httpRoot + "/metrics?scope=base"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      Matcher m = CPU_TIME.matcher(r.body());
      return r.statusCode() == 200 && m.find()
          ? Math.round(Double.parseDouble(m.group(1)) * 1e9)
          : -1;
    } catch (IOException | NumberFormatException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** "PostgreSQL 14.22; synchronous_commit=on, fsync=on", as the producer's session sees it. */
  String describe(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT current_setting('server_version'), current_setting('synchronous_commit'),"
                    + " current_setting('fsync')")) {
      rs.next();
      return "PostgreSQL "
          + rs.getString(1)
          + "; synchronous_commit="
          + rs.getString(2)
          + ", fsync="
          + rs.getString(3);
    }
  }

  /** The jobs of {@code ids} whose handler has started and committed its row, by id. */
  Map<Long, Started> started(Connection c, long[] ids) throws SQLException {
    var out = new HashMap<Long, Started>();
    // attempted_at is the database's now() in the claim statement that took the job.
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT g.job_id, j.attempted_at, g.handler_started_at FROM demo_greeting g"
                + " JOIN pgbus.job j ON j.id = g.job_id"
                + " WHERE g.job_id = ANY(?) AND g.handler_started_at IS NOT NULL")) {
      ps.setArray(1, bigints(c, ids));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(
              rs.getLong(1),
              new Started(
                  rs.getObject(2, OffsetDateTime.class).toInstant(),
                  rs.getObject(3, OffsetDateTime.class).toInstant()));
        }
      }
    }
    return out;
  }

  /** Waits until every job of {@code ids} has started; returns what started by then. */
  Map<Long, Started> awaitStarted(Connection c, long[] ids, Duration timeout) throws SQLException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      Map<Long, Started> seen = started(c, ids);
      if (seen.size() == ids.length || System.nanoTime() > deadline) {
        return seen;
      }
      Sleep.millis(200);
    }
  }

  /**
   * Removes the bench's greetings and completed jobs, so the demo shows people's greetings and job
   * counts again (retention would take the jobs only after a day).
   */
  void forget(Connection c, long[] ids) throws SQLException {
    try (PreparedStatement greetings =
            c.prepareStatement("DELETE FROM demo_greeting WHERE job_id = ANY(?)");
        PreparedStatement jobs =
            c.prepareStatement("DELETE FROM pgbus.job WHERE id = ANY(?) AND state = 'completed'")) {
      greetings.setArray(1, bigints(c, ids));
      greetings.executeUpdate();
      jobs.setArray(1, bigints(c, ids));
      jobs.executeUpdate();
    }
  }

  private static Array bigints(Connection c, long[] ids) throws SQLException {
    return c.createArrayOf("bigint", Arrays.stream(ids).boxed().toArray());
  }

  @Override
  public String toString() {
    return jdbcUrl + (httpRoot == null ? "" : " (" + httpRoot + ")");
  }
}

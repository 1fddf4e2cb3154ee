package io.pgbus.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PostgreSQL server the bench runs on: the one behind {@code --url}, or an embedded one (zonky,
 * as the tests use) started with {@code pg_stat_statements} preloaded and durable commits. Each
 * workload run gets a fresh database of its own ({@link #createDatabase}), so statement counts can
 * be read per database and notifications never cross runs.
 */
final class BenchServer implements AutoCloseable {

  private static final Pattern URL =
      Pattern.compile("(jdbc:postgresql://[^/?]*)(?:/[^?]*)?(\\?.*)?");

  private final EmbeddedPostgres embedded;
  private final String adminUrl;
  private final String source;
  private final String version;
  private final boolean statements;
  private final int maxConnections;
  private final String settings;
  private final BenchOptions options;

  private BenchServer(
      EmbeddedPostgres embedded, String adminUrl, String source, BenchOptions options)
      throws SQLException {
    this.embedded = embedded;
    this.adminUrl = adminUrl;
    this.source = source;
    this.options = options;
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      version = text(st, "SHOW server_version");
      maxConnections = Integer.parseInt(text(st, "SHOW max_connections"));
      settings =
          "fsync="
              + text(st, "SHOW fsync")
              + ", synchronous_commit="
              + text(st, "SHOW synchronous_commit")
              + (options.synchronousCommit() == null
                  ? ""
                  : " (bench databases: " + options.synchronousCommit() + ")")
              + (options.commitDelayMicros() == 0
                  ? ""
                  : ", commit_delay=" + options.commitDelayMicros() + " µs (bench databases)")
              + ", shared_buffers="
              + text(st, "SHOW shared_buffers")
              + ", max_connections="
              + maxConnections;
      statements = enableStatements(st);
    }
  }

  /** Starts the embedded server, or connects to {@code options.url()}. */
  static BenchServer start(BenchOptions options) throws SQLException, IOException {
    if (options.url() != null) {
      return new BenchServer(null, options.url(), "url", options);
    }
    EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            // pg_stat_statements must be preloaded, which only a restart can do: we start it.
            .setServerConfig("shared_preload_libraries", "pg_stat_statements")
            .setServerConfig("pg_stat_statements.track", "top")
            // zonky turns synchronous_commit off by default; a bench must pay for durable
            // commits as production does (--synchronous-commit=off measures the difference).
            .setServerConfig("synchronous_commit", "on")
            .setServerConfig("fsync", "on")
            // The fleet runs up to 100 engines, each with a listener and a small pool.
            .setServerConfig("max_connections", "450")
            .setServerConfig("shared_buffers", "256MB")
            .setRegisterShutdownHook(true)
            .start();
    return new BenchServer(pg, pg.getJdbcUrl("postgres", "postgres"), "embedded", options);
  }

  /** "embedded" or "url". */
  String source() {
    return source;
  }

  String version() {
    return version;
  }

  String settings() {
    return settings;
  }

  int maxConnections() {
    return maxConnections;
  }

  /** Whether pg_stat_statements can be read; when not, idle cost falls back to xact_commit. */
  boolean statements() {
    return statements;
  }

  /** Whether the server runs on this machine, so its CPU time can be read from /proc. */
  boolean local() {
    return adminUrl.contains("//localhost")
        || adminUrl.contains("//127.")
        || adminUrl.contains("//[::1]");
  }

  /** A new connection to the admin database; the caller closes it. */
  Connection admin() throws SQLException {
    return DriverManager.getConnection(adminUrl);
  }

  /** A fresh database, dropped when it is closed. */
  BenchDatabase createDatabase(String label) throws SQLException {
    String name =
        "pgbus_bench_"
            + label.replaceAll("[^a-z0-9_]", "")
            + "_"
            + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 40);
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      // The name is built here from [a-z0-9_]; CREATE DATABASE takes no bind parameters.
      st.execute("CREATE DATABASE \"" + name + "\"");
      if (options.synchronousCommit() != null) {
        st.execute(
            "ALTER DATABASE \""
                + name
                + "\" SET synchronous_commit = "
                + options.synchronousCommit());
      }
      if (options.commitDelayMicros() > 0) {
        st.execute(
            "ALTER DATABASE \"" + name + "\" SET commit_delay = " + options.commitDelayMicros());
      }
    }
    return new BenchDatabase(this, name, withDatabase(adminUrl, name));
  }

  void dropDatabase(String name) throws SQLException {
    try (Connection c = admin();
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
    }
  }

  @Override
  public void close() throws IOException {
    if (embedded != null) {
      embedded.close();
    }
  }

  private static boolean enableStatements(Statement st) throws SQLException {
    if (!text(st, "SHOW shared_preload_libraries").contains("pg_stat_statements")) {
      return false;
    }
    st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    try (ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_stat_statements")) {
      return rs.next();
    }
  }

  private static String text(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  static String withDatabase(String jdbcUrl, String database) {
    Matcher m = URL.matcher(jdbcUrl);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "not a jdbc:postgresql://host[:port]/database[?parameters] URL: " + jdbcUrl);
    }
    return m.group(1) + "/" + database + (m.group(2) == null ? "" : m.group(2));
  }
}

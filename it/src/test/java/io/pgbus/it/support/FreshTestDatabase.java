package io.pgbus.it.support;

import io.pgbus.engine.testing.HostilePublic;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;
import org.postgresql.Driver;

/**
 * Gives every integration-test run an empty database. The build runs it in pre-integration-test
 * (exec:java), before Arquillian starts Liberty, because the server's datasources point at a
 * database that has to exist already.
 *
 * <p>The database is dropped and created again, so a schema left by an earlier run (say, a
 * migration that was edited since and now fails Flyway's checksum validation) never leaks into this
 * one. {@code -Dpgbus.it.db.keep=true} keeps an existing database instead.
 *
 * <p>Settings come from the system properties {@code pgbus.it.db.host}, {@code .port}, {@code
 * .name}, {@code .user}, {@code .password}, {@code .keep} and {@code .hostile}; it/pom.xml passes
 * them. With {@code hostile} ({@code -Phostile-public}) it also migrates the database and plants
 * look-alikes of every operator and function in its schema public ({@code HostilePublic}); the
 * argument {@code check-hostile-public} then checks, after the ITs, that none of them ran.
 */
public final class FreshTestDatabase {

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
  private static final long CONNECT_DEADLINE_MS = 30_000;

  private FreshTestDatabase() {}

  public static void main(String[] args) throws Exception {
    String host = setting("host", "127.0.0.1");
    String port = setting("port", "5432");
    String name = setting("name", "pgbus_it");
    String user = setting("user", "postgres");
    String password = setting("password", "");
    boolean keep = Boolean.parseBoolean(setting("keep", "false"));
    boolean hostile = Boolean.parseBoolean(setting("hostile", "false"));
    if (!IDENTIFIER.matcher(name).matches()) {
      // The name goes into DDL text (CREATE/DROP DATABASE take no bind parameters).
      throw new IllegalArgumentException(
          "pgbus.it.db.name must match " + IDENTIFIER + ", was '" + name + "'");
    }
    String where = name + " at " + host + ":" + port;
    if (args.length > 0 && "check-hostile-public".equals(args[0])) {
      checkHostilePublic(
          "jdbc:postgresql://" + host + ":" + port + "/" + name, user, password, where);
      return;
    }
    String url = "jdbc:postgresql://" + host + ":" + port + "/postgres";
    try (Connection conn = connect(url, user, password);
        Statement st = conn.createStatement()) {
      if (keep && exists(conn, name)) {
        System.out.println("[pgbus-it] keeping database " + where);
        return;
      }
      // WITH (FORCE) (PostgreSQL 13+) ends sessions a killed earlier run may have left.
      st.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
      st.execute("CREATE DATABASE \"" + name + "\"");
      System.out.println("[pgbus-it] created empty database " + where);
    }
    if (hostile) {
      // The servers find the schema current; every statement they run meets the look-alikes.
      String dbUrl = "jdbc:postgresql://" + host + ":" + port + "/" + name;
      var ds = new org.postgresql.ds.PGSimpleDataSource();
      ds.setUrl(dbUrl);
      ds.setUser(user);
      ds.setPassword(password);
      io.pgbus.engine.Schema.migrate(ds);
      long started = System.nanoTime();
      try (Connection c = ds.getConnection()) {
        HostilePublic.plant(c);
      }
      System.out.printf(
          "[pgbus-it] migrated %s and planted a hostile public in %.1f s%n",
          where, (System.nanoTime() - started) / 1e9);
    }
  }

  /**
   * After the ITs of a {@code -Phostile-public} run: fails when pgbus ran any look-alike planted in
   * public (the build's post-integration-test step).
   */
  static void checkHostilePublic(String url, String user, String password, String where)
      throws Exception {
    try (Connection c = connect(url, user, password)) {
      List<String> hits = HostilePublic.hits(c);
      if (!hits.isEmpty()) {
        throw new IllegalStateException(
            "pgbus resolved look-alikes planted in schema public of "
                + where
                + " during the ITs (a statement that resolves an operator or function through"
                + " the caller's search_path):\n  "
                + String.join("\n  ", hits));
      }
      System.out.println("[pgbus-it] no look-alike in public of " + where + " ran");
    }
  }

  private static boolean exists(Connection conn, String name) throws SQLException {
    try (PreparedStatement ps =
        conn.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Retries for a while: CI may have started PostgreSQL a moment ago. */
  private static Connection connect(String url, String user, String password)
      throws SQLException, InterruptedException {
    Properties props = new Properties();
    props.setProperty("user", user);
    props.setProperty("password", password);
    props.setProperty("connectTimeout", "5");
    long deadline = System.currentTimeMillis() + CONNECT_DEADLINE_MS;
    // The driver is used directly, not through DriverManager, which may not see it from
    // exec:java's class loader.
    Driver driver = new Driver();
    while (true) {
      try {
        return driver.connect(url, props);
      } catch (SQLException e) {
        if (System.currentTimeMillis() > deadline) {
          throw new SQLException("cannot reach PostgreSQL at " + url + " as " + user, e);
        }
        Thread.sleep(500);
      }
    }
  }

  private static String setting(String key, String fallback) {
    String value = System.getProperty("pgbus.it.db." + key);
    return value == null || value.isEmpty() && !"password".equals(key) ? fallback : value;
  }
}

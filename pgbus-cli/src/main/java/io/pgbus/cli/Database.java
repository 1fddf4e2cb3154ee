package io.pgbus.cli;

import io.pgbus.engine.SchemaName;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The database a command works on: a non-pooling datasource (one command, a few connections), and
 * who acts, for the audit trail.
 */
final class Database {

  /** How long to wait for the database before reporting it unreachable. */
  static final int CONNECT_TIMEOUT_SECONDS = 10;

  /** pgbus.audit.actor and pgbus.job.enqueued_by hold at most this many characters (V7). */
  static final int MAX_ACTOR = 256;

  private final PGSimpleDataSource plain = new PGSimpleDataSource();
  private final SchemaName schema;
  // The connections of every command: SQL written against pgbus. runs in the instance's schema.
  private final DataSource dataSource;
  private String actor;

  Database(String url, String user, String password) {
    this(url, user, password, SchemaName.DEFAULT);
  }

  Database(String url, String user, String password, SchemaName schema) {
    PGSimpleDataSource dataSource = plain;
    dataSource.setURL(url);
    if (user != null) {
      dataSource.setUser(user);
    }
    if (password != null) {
      dataSource.setPassword(password);
    }
    dataSource.setApplicationName("pgbus-cli");
    dataSource.setConnectTimeout(CONNECT_TIMEOUT_SECONDS);
    this.schema = schema;
    this.dataSource = schema.wrap(plain);
  }

  DataSource dataSource() {
    return dataSource;
  }

  /** The instance's schema ({@code --schema}, {@code pgbus.schema}). */
  SchemaName schema() {
    return schema;
  }

  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /**
   * Runs {@code work} in one transaction: committed when it returns, rolled back when it throws.
   */
  <T> T inTransaction(Work<T> work) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  /**
   * Who acts, as the audit trail records it: the OS user who ran the command and the database role
   * it ran as ({@code cli:alice (role pgbus_admin)}). The admin API records its caller principal;
   * the command line has none, so it names both.
   */
  String actor() throws SQLException {
    if (actor == null) {
      String role;
      try (Connection c = dataSource.getConnection();
          PreparedStatement ps = c.prepareStatement("SELECT session_user::text");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        role = rs.getString(1);
      }
      actor = actor(System.getProperty("user.name", "unknown"), role);
    }
    return actor;
  }

  static String actor(String osUser, String role) {
    String a = "cli:" + osUser + " (role " + role + ")";
    // A control character would forge a line where the audit is shown (logs, the console).
    a = a.replaceAll("[\\p{Cntrl}\u2028\u2029]", "?");
    return a.length() <= MAX_ACTOR ? a : a.substring(0, MAX_ACTOR);
  }
}

package io.pgbus.it.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * Small JDBC helpers for assertions, with bind parameters only. The test's own statements run under
 * {@code application_name = pgbus-test-helper}, which the look-alikes of a hostile public
 * (-Phostile-public) do not record: they are there for pgbus's statements.
 */
public final class Sql {
  /** The application_name a hostile public does not record. */
  public static final String HELPER = "pgbus-test-helper";

  private Sql() {}

  /** Sets application_name to {@code name} and returns what it was. */
  private static String named(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_catalog.current_setting('application_name'),"
                + " pg_catalog.set_config('application_name', ?::text, false)")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  public static long count(DataSource ds, String sql, Object... params) throws SQLException {
    Object v = value(ds, sql, params);
    return v == null ? 0 : ((Number) v).longValue();
  }

  public static Object value(DataSource ds, String sql, Object... params) throws SQLException {
    try (Connection c = ds.getConnection()) {
      String before = named(c, HELPER);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < params.length; i++) {
          ps.setObject(i + 1, params[i]);
        }
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getObject(1) : null;
        }
      } finally {
        named(c, before);
      }
    }
  }

  public static void execute(DataSource ds, String sql, Object... params) throws SQLException {
    try (Connection c = ds.getConnection()) {
      String before = named(c, HELPER);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < params.length; i++) {
          ps.setObject(i + 1, params[i]);
        }
        ps.execute();
      } finally {
        named(c, before);
      }
    }
  }
}

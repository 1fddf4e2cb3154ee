package io.pgbus.it.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/** Small JDBC helpers for assertions, with bind parameters only. */
public final class Sql {
  private Sql() {}

  public static long count(DataSource ds, String sql, Object... params) throws SQLException {
    Object v = value(ds, sql, params);
    return v == null ? 0 : ((Number) v).longValue();
  }

  public static Object value(DataSource ds, String sql, Object... params) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1) : null;
      }
    }
  }

  public static void execute(DataSource ds, String sql, Object... params) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.execute();
    }
  }
}

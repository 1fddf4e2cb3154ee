package io.pgbus.it;

import jakarta.annotation.Resource;
import jakarta.ejb.Stateless;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * Writes and reads rows of {@code it_smoke} through the JTA datasource. Its methods take part in
 * the caller's transaction (container-managed, REQUIRED).
 */
@Stateless
public class SmokeRows {

  @Resource(lookup = "jdbc/pgbus")
  private DataSource dataSource;

  public void createTable() throws SQLException {
    try (Connection conn = dataSource.getConnection();
        Statement st = conn.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS it_smoke (id text PRIMARY KEY)");
    }
  }

  public void insert(String id) throws SQLException {
    try (Connection conn = dataSource.getConnection();
        PreparedStatement ps = conn.prepareStatement("INSERT INTO it_smoke (id) VALUES (?)")) {
      ps.setString(1, id);
      ps.executeUpdate();
    }
  }

  /** Sends a NOTIFY; PostgreSQL delivers it when the surrounding transaction commits. */
  public void notify(String channel, String payload) throws SQLException {
    try (Connection conn = dataSource.getConnection();
        PreparedStatement ps = conn.prepareStatement("SELECT pg_notify(?, ?)")) {
      ps.setString(1, channel);
      ps.setString(2, payload);
      ps.execute();
    }
  }

  public boolean exists(String id) throws SQLException {
    try (Connection conn = dataSource.getConnection();
        PreparedStatement ps = conn.prepareStatement("SELECT 1 FROM it_smoke WHERE id = ?::text")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * All SQL on {@code pgbus.setting}: the one row of configuration that the SQL functions apply
 * themselves (V5__hardening.sql), so that an enqueue or claim from SQL keeps the limits the Java
 * API keeps. The engine writes it at start; with several JVMs the last to start wins.
 */
final class SettingStore {

  // Writes only a changed value, and returns the value it replaced (the self-join reads the row
  // as it was: FROM sees the snapshot, SET writes the new version). No row: V5 not applied.
  private static final String SET_MAX_PAYLOAD_BYTES =
      """
      UPDATE pgbus.setting s
         SET max_payload_bytes = ?, updated_at = now(), updated_by = ?::text
        FROM pgbus.setting old
       WHERE s.max_payload_bytes <> ?
      RETURNING old.max_payload_bytes
      """;

  /**
   * Sets the payload limit the SQL functions apply; the value it replaced, or null when it was
   * already {@code bytes}.
   */
  Integer settingMaxPayloadBytes(Connection c, int bytes, String by) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_MAX_PAYLOAD_BYTES)) {
      ps.setInt(1, bytes);
      ps.setString(2, by);
      ps.setInt(3, bytes);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getInt(1) : null;
      }
    }
  }
}

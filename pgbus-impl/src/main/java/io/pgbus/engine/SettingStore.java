package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * All SQL on {@code pgbus.setting}: the one row of configuration that the SQL functions apply
 * themselves (V5__hardening.sql), so that an enqueue or claim from SQL keeps the limits the Java
 * API keeps. The engine writes it at start; of several builds the newest wins, of several JVMs of
 * one build the last to start.
 */
final class SettingStore {

  // The row and the build that last wrote it (V26), locked until the caller commits.
  private static final String READ_FOR_UPDATE =
      "SELECT max_payload_bytes, build FROM pgbus.setting FOR UPDATE";

  private static final String SET_MAX_PAYLOAD_BYTES =
      """
      UPDATE pgbus.setting
         SET max_payload_bytes = ?, build = ?::text, updated_at = pg_catalog.now(),
             updated_by = ?::text
      """;

  /**
   * What publishing the payload limit did.
   *
   * @param replaced the value it replaced; null when it was already this build's
   * @param keptFor the newer build whose value was kept; null when this build's was written
   */
  record Published(Integer replaced, BuildVersion keptFor) {}

  /**
   * Sets the payload limit the SQL functions apply, unless a newer build set it: the newest build
   * wins (docs/schema.md, "pgbus.setting"). In the caller's transaction. No row (V5 not applied):
   * nothing happens.
   */
  Published settingMaxPayloadBytes(Connection c, int bytes, BuildVersion build, String by)
      throws SQLException {
    int stored;
    String writer;
    try (PreparedStatement ps = c.prepareStatement(READ_FOR_UPDATE);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return new Published(null, null);
      }
      stored = rs.getInt(1);
      writer = rs.getString(2);
    }
    if (writer != null && build.olderThan(BuildVersion.parse(writer))) {
      return new Published(null, BuildVersion.parse(writer));
    }
    if (stored == bytes && build.toString().equals(writer)) {
      return new Published(null, null);
    }
    try (PreparedStatement ps = c.prepareStatement(SET_MAX_PAYLOAD_BYTES)) {
      ps.setInt(1, bytes);
      ps.setString(2, build.toString());
      ps.setString(3, by);
      ps.executeUpdate();
    }
    return new Published(stored == bytes ? null : stored, null);
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * All SQL on {@code pgbus.setting}: the one row of configuration that the SQL functions apply
 * themselves (V5__hardening.sql, V27), so that an enqueue or claim from SQL keeps the limits and
 * the wake mode the Java API keeps. The engine writes it at start; of several builds the newest
 * wins, of several JVMs of one build the last to start.
 */
final class SettingStore {

  // The row and the build that last wrote it (V26), locked until the caller commits.
  private static final String READ_FOR_UPDATE =
      "SELECT max_payload_bytes, wake_mode, build FROM pgbus.setting FOR UPDATE";

  private static final String SET_SETTINGS =
      """
      UPDATE pgbus.setting
         SET max_payload_bytes = ?, wake_mode = ?::text, build = ?::text,
             updated_at = pg_catalog.now(), updated_by = ?::text
      """;

  /**
   * What publishing the settings did.
   *
   * @param replaced the payload limit it replaced; null when it was already this value
   * @param replacedWakeMode the wake mode it replaced (its SQL value); null when unchanged
   * @param keptFor the newer build whose values were kept; null when this build's were written
   */
  record Published(Integer replaced, String replacedWakeMode, BuildVersion keptFor) {}

  /**
   * Sets the payload limit and the wake mode the SQL functions apply (V5, V27), unless a newer
   * build set them: the newest build wins (docs/schema.md, "pgbus.setting"). In the caller's
   * transaction. No row (V5 not applied): nothing happens.
   */
  Published settingPublish(
      Connection c, int bytes, WakeMode wakeMode, BuildVersion build, String by)
      throws SQLException {
    String mode = sqlValue(wakeMode);
    int stored;
    String storedMode;
    String writer;
    try (PreparedStatement ps = c.prepareStatement(READ_FOR_UPDATE);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return new Published(null, null, null);
      }
      stored = rs.getInt(1);
      storedMode = rs.getString(2);
      writer = rs.getString(3);
    }
    if (writer != null && build.olderThan(BuildVersion.parse(writer))) {
      return new Published(null, null, BuildVersion.parse(writer));
    }
    if (stored == bytes && mode.equals(storedMode) && build.toString().equals(writer)) {
      return new Published(null, null, null);
    }
    try (PreparedStatement ps = c.prepareStatement(SET_SETTINGS)) {
      ps.setInt(1, bytes);
      ps.setString(2, mode);
      ps.setString(3, build.toString());
      ps.setString(4, by);
      ps.executeUpdate();
    }
    return new Published(
        stored == bytes ? null : stored, mode.equals(storedMode) ? null : storedMode, null);
  }

  /** pgbus.setting.wake_mode's value for a mode: its CHECK allows these two. */
  static String sqlValue(WakeMode mode) {
    return switch (mode) {
      case COALESCED -> "coalesced";
      case IN_TRANSACTION -> "in_transaction";
    };
  }
}

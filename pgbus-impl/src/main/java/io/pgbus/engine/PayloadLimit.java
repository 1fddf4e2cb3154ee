package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * {@code pgbus.max-payload-bytes} where the SQL functions read it: an enqueue or claim from SQL
 * keeps the limit that the Java API keeps ({@link SettingStore}). Written by every engine at its
 * start; with several JVMs the last to start wins.
 */
final class PayloadLimit {

  // The engine's logger: the line belongs to its start.
  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  private PayloadLimit() {}

  /**
   * Writes pgbus.max-payload-bytes to pgbus.setting, where the SQL functions read it, and logs a
   * change. A failure (no V5 schema yet, or a role without UPDATE on pgbus.setting) is logged and
   * leaves the SQL limit as it was: the Java API keeps its own limit either way.
   */
  static void publish(EngineConfig config, DataSource dataSource) {
    int limit = config.maxPayloadBytes();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Integer before = new SettingStore().settingMaxPayloadBytes(c, limit, config.workerId());
      if (before != null) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: the SQL payload limit (pgbus.setting.max_payload_bytes) is now {1}"
                + " bytes, was {2}, from pgbus.max-payload-bytes; the last JVM to start sets it, so"
                + " keep pgbus.max-payload-bytes equal on all of them",
            config.workerId(),
            limit,
            before);
      }
    } catch (SQLException e) {
      LOG.log(
          Level.WARNING,
          "pgbus engine {0} could not write pgbus.max-payload-bytes ({1}) to pgbus.setting: {2};"
              + " SQL enqueues and claims keep the limit stored there. Grant the application's"
              + " role UPDATE on pgbus.setting",
          config.workerId(),
          limit,
          e.getMessage());
    }
  }
}

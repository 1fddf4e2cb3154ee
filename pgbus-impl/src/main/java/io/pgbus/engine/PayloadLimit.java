package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * {@code pgbus.max-payload-bytes} and {@code pgbus.wake-mode} where the SQL functions read them: an
 * enqueue or claim from SQL keeps the limit and wakes as the Java API does ({@link SettingStore}).
 * Written by every engine at its start: the newest build wins, and among the JVMs of one build the
 * last to start (V26).
 */
final class PayloadLimit {

  // The engine's logger: the line belongs to its start.
  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  private PayloadLimit() {}

  /**
   * Writes pgbus.max-payload-bytes and pgbus.wake-mode to pgbus.setting, where the SQL functions
   * read them, and logs a change, unless a newer build wrote it (the newest build wins, V26). A
   * failure (no V5 schema yet, or a role without UPDATE on pgbus.setting) is logged and leaves the
   * SQL limit as it was: the Java API keeps its own limit either way.
   */
  static void publish(EngineConfig config, DataSource dataSource) {
    int limit = config.maxPayloadBytes();
    BuildVersion build = BuildVersion.current();
    try (Connection c = dataSource.getConnection()) {
      SettingStore.Published p =
          LocalTransaction.run(
              c,
              () ->
                  new SettingStore()
                      .settingPublish(c, limit, config.wakeMode(), build, config.workerId()));
      if (p.keptFor() != null) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: keeping the SQL payload limit and wake mode (pgbus.setting)"
                + " that pgbus {1} wrote, newer than this build ({2}): the newest build wins",
            config.workerId(),
            p.keptFor(),
            build);
        return;
      }
      if (p.replacedWakeMode() != null) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: the SQL enqueue functions now wake {1} (pgbus.setting.wake_mode),"
                + " were {2}, from pgbus.wake-mode; keep it equal on all JVMs",
            config.workerId(),
            SettingStore.sqlValue(config.wakeMode()),
            p.replacedWakeMode());
      }
      if (p.replaced() != null) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: the SQL payload limit (pgbus.setting.max_payload_bytes) is now {1}"
                + " bytes, was {2}, from pgbus.max-payload-bytes; the newest build, and among its"
                + " JVMs the last to start, sets it, so keep pgbus.max-payload-bytes equal on all"
                + " of them",
            config.workerId(),
            limit,
            p.replaced());
      }
    } catch (SQLException e) {
      LOG.log(
          Level.WARNING,
          "pgbus engine {0} could not write pgbus.max-payload-bytes ({1}) and pgbus.wake-mode to"
              + " pgbus.setting: {2}; SQL enqueues and claims keep the values stored there. Grant"
              + " the application's role UPDATE on pgbus.setting",
          config.workerId(),
          limit,
          e.getMessage());
    }
  }
}

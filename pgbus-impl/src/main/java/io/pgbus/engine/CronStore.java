package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * All SQL on {@code pgbus.cron}: the last run each cron has enqueued. Instants travel as {@link
 * OffsetDateTime} in UTC, read and written back unchanged, so the compare-and-set in {@link
 * #cronAdvance} compares exactly what it read. Names resolve as in {@link JobStore}: nothing
 * through the application's search_path.
 */
final class CronStore {

  /** The crons' state and the database clock, in one read. */
  record State(Instant now, Map<String, Instant> lastRuns) {}

  private static final String STATE =
      """
      SELECT n.name, c.last_run_at, now()
        FROM pg_catalog.unnest(?::text[]) AS n(name)
        LEFT JOIN pgbus.cron c ON c.name = n.name
      """;

  // A cron seen for the first time starts from this moment: no run before it is ever enqueued.
  private static final String INIT =
      """
      INSERT INTO pgbus.cron (name, last_run_at) VALUES (?, ?)
      ON CONFLICT (name) DO NOTHING
      """;

  // The fence: only the transaction that moves last_run_at from the value it read enqueues the
  // run. Two leaders for a moment (one of them not knowing yet that its lease ran out) both try;
  // the second waits for the first's row lock, then finds last_run_at changed and updates nothing.
  private static final String ADVANCE =
      """
      UPDATE pgbus.cron SET last_run_at = ?, updated_at = now()
       WHERE name = ?::text AND last_run_at = ?
      """;

  State cronState(Connection c, List<String> names) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(STATE)) {
      ps.setArray(1, c.createArrayOf("text", names.toArray(String[]::new)));
      var lastRuns = new HashMap<String, Instant>();
      Instant now = null;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime last = rs.getObject(2, OffsetDateTime.class);
          if (last != null) {
            lastRuns.put(rs.getString(1), last.toInstant());
          }
          now = rs.getObject(3, OffsetDateTime.class).toInstant();
        }
      }
      return new State(now, lastRuns);
    }
  }

  /** Records a new cron as starting at {@code from}; false when another JVM did already. */
  boolean cronInit(Connection c, String name, Instant from) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INIT)) {
      ps.setString(1, name);
      ps.setObject(2, utc(from));
      return ps.executeUpdate() == 1;
    }
  }

  /** Moves the cron's last run from {@code from} to {@code to}; false when someone else did. */
  boolean cronAdvance(Connection c, String name, Instant from, Instant to) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ADVANCE)) {
      ps.setObject(1, utc(to));
      ps.setString(2, name);
      ps.setObject(3, utc(from));
      return ps.executeUpdate() == 1;
    }
  }

  private static OffsetDateTime utc(Instant t) {
    return OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
  }
}

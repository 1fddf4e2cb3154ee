package io.pgbus.engine;

import io.pgbus.MisfirePolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * All SQL on {@code pgbus.schedule} (V15). Instants travel as {@link OffsetDateTime} in UTC. Every
 * change bumps {@code revision}; the leader's advance is a compare-and-set on it (see {@link
 * #ADVANCE}). Names resolve as in {@link JobStore}: nothing through the application's search_path.
 */
final class ScheduleStore {

  /** A stored schedule with the revision it was read at. */
  record Row(Schedule schedule, long revision) {
    ScheduleDefinition definition() {
      return schedule.definition();
    }
  }

  private static final String COLUMNS =
      """
      name, cron, zone, queue::text, payload::text, priority, max_attempts, misfire,
      catch_up_limit, paused, last_run_at, next_run_at, source, updated_at, updated_by, revision
      """;

  private static final String NOW = "SELECT now()";

  // ON CONFLICT DO NOTHING rather than a unique violation: a taken name is reported without
  // aborting the caller's transaction.
  private static final String CREATE =
      """
      INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, priority, max_attempts,
                                  misfire, catch_up_limit, next_run_at, source, updated_by)
      VALUES (?, ?, ?, pgbus.queue(?), ?::jsonb, ?, ?, ?, ?, ?, 'api',
              COALESCE(?, current_user))
      ON CONFLICT (name) DO NOTHING
      RETURNING
      """
          + COLUMNS;

  // In SET, cron and zone are the row's values before the update: the next run is recomputed only
  // when the times changed, so an edit of the payload does not skip a run that is due right now.
  private static final String UPDATE =
      """
      UPDATE pgbus.schedule
         SET next_run_at = CASE WHEN cron = ?::text AND zone = ?::text THEN next_run_at ELSE ? END,
             cron = ?, zone = ?, queue = pgbus.queue(?), payload = ?::jsonb, priority = ?,
             max_attempts = ?, misfire = ?, catch_up_limit = ?, revision = revision + 1,
             updated_at = now(), updated_by = COALESCE(?, current_user)
       WHERE name = ?::text
      RETURNING
      """
          + COLUMNS;

  // Config wins over what the table holds, but a row that already matches is not touched (no
  // revision bump, no updated_at), so restarts are no change. The pause stays as an operator set
  // it.
  private static final String UPSERT_CONFIG =
      """
      INSERT INTO pgbus.schedule AS s (name, cron, zone, queue, payload, priority, max_attempts,
                                       misfire, catch_up_limit, next_run_at, source, updated_by)
      VALUES (?, ?, ?, pgbus.queue(?), ?::jsonb, ?, ?, ?, ?, ?, 'config', COALESCE(?, current_user))
      ON CONFLICT (name) DO UPDATE
         SET next_run_at = CASE WHEN s.cron = excluded.cron AND s.zone = excluded.zone
                                THEN s.next_run_at ELSE excluded.next_run_at END,
             cron = excluded.cron, zone = excluded.zone, queue = excluded.queue,
             payload = excluded.payload, priority = excluded.priority,
             max_attempts = excluded.max_attempts, misfire = excluded.misfire,
             catch_up_limit = excluded.catch_up_limit, source = 'config',
             revision = s.revision + 1, updated_at = now(), updated_by = excluded.updated_by
       WHERE (s.cron, s.zone, s.queue, s.payload, s.priority, s.max_attempts, s.misfire,
              s.catch_up_limit, s.source)
             IS DISTINCT FROM
             (excluded.cron, excluded.zone, excluded.queue, excluded.payload, excluded.priority,
              excluded.max_attempts, excluded.misfire, excluded.catch_up_limit, excluded.source)
      """;

  // Before V15, config crons kept their last run in pgbus.cron (V3).
  private static final String CRON_LAST_RUN =
      "SELECT last_run_at FROM pgbus.cron WHERE name = ?::text";

  private static final String PAUSE =
      """
      UPDATE pgbus.schedule
         SET paused = true, revision = revision + 1, updated_at = now(),
             updated_by = COALESCE(?, current_user)
       WHERE name = ?::text
      """;

  // Guarded by the revision read with the cron, since the next run is computed from it in Java.
  private static final String RESUME =
      """
      UPDATE pgbus.schedule
         SET paused = false, next_run_at = ?, revision = revision + 1, updated_at = now(),
             updated_by = COALESCE(?, current_user)
       WHERE name = ?::text AND revision = ?
      """;

  private static final String DELETE = "DELETE FROM pgbus.schedule WHERE name = ?::text";

  private static final String GET =
      "SELECT " + COLUMNS + " FROM pgbus.schedule WHERE name = ?::text";

  private static final String LIST =
      "SELECT "
          + COLUMNS
          + " FROM pgbus.schedule WHERE name > COALESCE(?::text, '') ORDER BY name LIMIT ?";

  // Served by schedule_due_idx, oldest first, so a backlog is worked off in order.
  private static final String DUE =
      "SELECT "
          + COLUMNS
          + " FROM pgbus.schedule WHERE NOT paused AND next_run_at <= ?"
          + " ORDER BY next_run_at LIMIT ?";

  private static final String EARLIEST =
      "SELECT min(next_run_at) FROM pgbus.schedule WHERE NOT paused";

  // The fence: only the transaction that moves the row on from the revision it read enqueues the
  // runs. Two leaders for a moment both try; the second waits for the first's row lock, then finds
  // the revision changed and updates nothing. A change through the API (new queue, pause, delete)
  // between the leader's read and this update makes it update nothing too: the next tick re-reads.
  private static final String ADVANCE =
      """
      UPDATE pgbus.schedule
         SET next_run_at = ?, last_run_at = COALESCE(?, last_run_at), revision = revision + 1
       WHERE name = ?::text AND revision = ?
      """;

  Instant now(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(NOW);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getObject(1, OffsetDateTime.class).toInstant();
    }
  }

  /** Inserts a new schedule; empty when the name is taken. */
  Optional<Row> scheduleCreate(Connection c, ScheduleDefinition d, Instant nextRun, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CREATE)) {
      int i = bindDefinition(ps, 1, d);
      setInstant(ps, i++, nextRun);
      ps.setString(i, actor);
      return one(ps);
    }
  }

  /** Replaces a definition; empty when there is no schedule of that name. */
  Optional<Row> scheduleUpdate(Connection c, ScheduleDefinition d, Instant nextRun, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UPDATE)) {
      ps.setString(1, d.cron());
      ps.setString(2, d.zone());
      setInstant(ps, 3, nextRun);
      ps.setString(4, d.cron());
      ps.setString(5, d.zone());
      ps.setString(6, d.queue());
      ps.setString(7, d.payloadJson());
      ps.setInt(8, d.priority());
      setInteger(ps, 9, d.maxAttempts());
      ps.setString(10, misfire(d.misfire()));
      setInteger(ps, 11, d.catchUpLimit());
      ps.setString(12, actor);
      ps.setString(13, d.name());
      return one(ps);
    }
  }

  /** Creates or updates a schedule from configuration; true when the row changed. */
  boolean scheduleUpsertConfig(Connection c, ScheduleDefinition d, Instant nextRun, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UPSERT_CONFIG)) {
      int i = bindDefinition(ps, 1, d);
      setInstant(ps, i++, nextRun);
      ps.setString(i, actor);
      return ps.executeUpdate() == 1;
    }
  }

  /** The last run a V3 cron of this name recorded, or null. */
  Instant cronLastRun(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CRON_LAST_RUN)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1, OffsetDateTime.class).toInstant() : null;
      }
    }
  }

  boolean schedulePause(Connection c, String name, String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PAUSE)) {
      ps.setString(1, actor);
      ps.setString(2, name);
      return ps.executeUpdate() == 1;
    }
  }

  /** Resumes the schedule read at {@code revision}; false when it changed since. */
  boolean scheduleResume(Connection c, String name, long revision, Instant nextRun, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESUME)) {
      setInstant(ps, 1, nextRun);
      ps.setString(2, actor);
      ps.setString(3, name);
      ps.setLong(4, revision);
      return ps.executeUpdate() == 1;
    }
  }

  boolean scheduleDelete(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DELETE)) {
      ps.setString(1, name);
      return ps.executeUpdate() == 1;
    }
  }

  Optional<Row> scheduleGet(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(GET)) {
      ps.setString(1, name);
      return one(ps);
    }
  }

  List<Row> scheduleList(Connection c, String afterName, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LIST)) {
      ps.setString(1, afterName);
      ps.setInt(2, limit);
      return all(ps);
    }
  }

  /** Unpaused schedules whose next run is at or before {@code now}, oldest first. */
  List<Row> scheduleDue(Connection c, Instant now, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DUE)) {
      setInstant(ps, 1, now);
      ps.setInt(2, limit);
      return all(ps);
    }
  }

  /** The earliest next run of an unpaused schedule, or null. */
  Instant scheduleEarliest(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EARLIEST);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      OffsetDateTime t = rs.getObject(1, OffsetDateTime.class);
      return t == null ? null : t.toInstant();
    }
  }

  /**
   * Moves a schedule read at {@code revision} on to {@code nextRun}, recording {@code lastRun}
   * (null: unchanged); false when it changed since (another leader, or an API change).
   */
  boolean scheduleAdvance(
      Connection c, String name, long revision, Instant nextRun, Instant lastRun)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ADVANCE)) {
      setInstant(ps, 1, nextRun);
      setInstant(ps, 2, lastRun);
      ps.setString(3, name);
      ps.setLong(4, revision);
      return ps.executeUpdate() == 1;
    }
  }

  /** Binds name … catch_up_limit from {@code first}; returns the next index. */
  private static int bindDefinition(PreparedStatement ps, int first, ScheduleDefinition d)
      throws SQLException {
    int i = first;
    ps.setString(i++, d.name());
    ps.setString(i++, d.cron());
    ps.setString(i++, d.zone());
    ps.setString(i++, d.queue());
    ps.setString(i++, d.payloadJson());
    ps.setInt(i++, d.priority());
    setInteger(ps, i++, d.maxAttempts());
    ps.setString(i++, misfire(d.misfire()));
    setInteger(ps, i++, d.catchUpLimit());
    return i;
  }

  private static void setInstant(PreparedStatement ps, int i, Instant t) throws SQLException {
    ps.setObject(i, utc(t), Types.TIMESTAMP_WITH_TIMEZONE);
  }

  private static void setInteger(PreparedStatement ps, int i, Integer v) throws SQLException {
    if (v == null) {
      ps.setNull(i, Types.INTEGER);
    } else {
      ps.setInt(i, v);
    }
  }

  private static String misfire(MisfirePolicy p) {
    return p.name().toLowerCase(Locale.ROOT);
  }

  private static Optional<Row> one(PreparedStatement ps) throws SQLException {
    List<Row> rows = all(ps);
    return rows.isEmpty() ? Optional.empty() : Optional.of(rows.get(0));
  }

  private static List<Row> all(PreparedStatement ps) throws SQLException {
    var out = new ArrayList<Row>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(row(rs));
      }
    }
    return out;
  }

  private static Row row(ResultSet rs) throws SQLException {
    ScheduleDefinition d =
        ScheduleDefinition.of(rs.getString(1), rs.getString(2), rs.getString(4))
            .inZone(rs.getString(3))
            .withPayloadJson(rs.getString(5))
            .withPriority(rs.getInt(6));
    int attempts = rs.getInt(7);
    if (!rs.wasNull()) {
      d = d.withMaxAttempts(attempts);
    }
    MisfirePolicy policy = MisfirePolicy.valueOf(rs.getString(8).toUpperCase(Locale.ROOT));
    d = policy == MisfirePolicy.CATCH_UP ? d.catchingUp(rs.getInt(9)) : d.withMisfire(policy);
    Schedule s =
        new Schedule(
            d,
            rs.getBoolean(10),
            instant(rs, 11),
            instant(rs, 12),
            rs.getString(13),
            instant(rs, 14),
            rs.getString(15));
    return new Row(s, rs.getLong(16));
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  private static OffsetDateTime utc(Instant t) {
    return t == null ? null : OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
  }
}

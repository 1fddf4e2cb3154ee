package io.pgbus.engine;

import io.pgbus.MisfirePolicy;
import io.pgbus.OverlapPolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
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
      catch_up_limit, paused, last_run_at, next_run_at, source, updated_at, updated_by, revision,
      overlap, last_job_id, last_outcome
      """;

  private static final String NOW = "SELECT now()";

  /**
   * The tail of every statement that changes a schedule (V18): in the same statement, one audit row
   * per changed schedule (who: {@code actor}, an SQL expression; what: {@code action}, its queue
   * and name, the revision and times it now has; when: the audit row's {@code at}), and the wake-up
   * of {@link Channels#SCHEDULE}, sent at commit. The change is the CTE {@code acted} (RETURNING
   * the schedule's row); the statement returns {@link #COLUMNS} of the changed rows.
   */
  private static String audited(String action, String actor) {
    return """
        , audited AS (
          INSERT INTO pgbus.audit (actor, action, queue, schedule, detail)
          SELECT %s, %s, a.queue::text, a.name,
                 pg_catalog.jsonb_build_object('revision', a.revision, 'cron', a.cron,
                   'zone', a.zone, 'misfire', a.misfire, 'overlap', a.overlap,
                   'paused', a.paused, 'source', a.source)
            FROM acted a),
        sent AS (SELECT pg_catalog.pg_notify('%s', '') FROM acted LIMIT 1)
        SELECT %s, (SELECT count(*) FROM sent) FROM acted
        """
        .formatted(actor, action, Channels.SCHEDULE, COLUMNS);
  }

  // ON CONFLICT DO NOTHING rather than a unique violation: a taken name is reported without
  // aborting the caller's transaction.
  private static final String CREATE =
      """
      WITH acted AS (
        INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, priority, max_attempts,
                                    misfire, catch_up_limit, overlap, next_run_at, source,
                                    updated_by)
        VALUES (?, ?, ?, pgbus.queue(?), ?::jsonb, ?, ?, ?, ?, ?, ?, 'api',
                COALESCE(?, current_user))
        ON CONFLICT (name) DO NOTHING
        RETURNING *)
      """
          + audited("'schedule_create'", "a.updated_by");

  // In SET, cron and zone are the row's values before the update: the next run is recomputed only
  // when the times changed, so an edit of the payload does not skip a run that is due right now.
  private static final String UPDATE =
      """
      WITH acted AS (
        UPDATE pgbus.schedule
           SET next_run_at = CASE WHEN cron = ?::text AND zone = ?::text THEN next_run_at ELSE ? END,
               cron = ?, zone = ?, queue = pgbus.queue(?), payload = ?::jsonb, priority = ?,
               max_attempts = ?, misfire = ?, catch_up_limit = ?, overlap = ?,
               revision = revision + 1,
               updated_at = now(), updated_by = COALESCE(?, current_user)
         WHERE name = ?::text
        RETURNING *)
      """
          + audited("'schedule_update'", "a.updated_by");

  // Config wins over what the table holds, but a row that already matches is not touched (no
  // revision bump, no updated_at), so restarts are no change. The pause stays as an operator set
  // it.
  // Audited as a create when the row is new (xmax 0: no earlier version was locked or updated).
  private static final String UPSERT_CONFIG =
      """
      WITH acted AS (
      INSERT INTO pgbus.schedule AS s (name, cron, zone, queue, payload, priority, max_attempts,
                                       misfire, catch_up_limit, overlap, next_run_at, source,
                                       updated_by)
      VALUES (?, ?, ?, pgbus.queue(?), ?::jsonb, ?, ?, ?, ?, ?, ?, 'config',
              COALESCE(?, current_user))
      ON CONFLICT (name) DO UPDATE
         SET next_run_at = CASE WHEN s.cron = excluded.cron AND s.zone = excluded.zone
                                THEN s.next_run_at ELSE excluded.next_run_at END,
             cron = excluded.cron, zone = excluded.zone, queue = excluded.queue,
             payload = excluded.payload, priority = excluded.priority,
             max_attempts = excluded.max_attempts, misfire = excluded.misfire,
             catch_up_limit = excluded.catch_up_limit, overlap = excluded.overlap,
             source = 'config',
             revision = s.revision + 1, updated_at = now(), updated_by = excluded.updated_by
       WHERE (s.cron, s.zone, s.queue::text, s.payload, s.priority, s.max_attempts, s.misfire,
              s.catch_up_limit, s.overlap, s.source)
             IS DISTINCT FROM
             (excluded.cron, excluded.zone, excluded.queue::text, excluded.payload, excluded.priority,
              excluded.max_attempts, excluded.misfire, excluded.catch_up_limit, excluded.overlap,
              excluded.source)
      RETURNING s.*, s.xmax::text = '0' AS inserted)
      """
          + audited(
              "CASE WHEN a.inserted THEN 'schedule_create' ELSE 'schedule_update' END",
              "a.updated_by");

  // Before V15, config crons kept their last run in pgbus.cron (V3).
  private static final String CRON_LAST_RUN =
      "SELECT last_run_at FROM pgbus.cron WHERE name = ?::text";

  private static final String PAUSE =
      """
      WITH acted AS (
        UPDATE pgbus.schedule
           SET paused = true, revision = revision + 1, updated_at = now(),
               updated_by = COALESCE(?, current_user)
         WHERE name = ?::text
        RETURNING *)
      """
          + audited("'schedule_pause'", "a.updated_by");

  // Guarded by the revision read with the cron, since the next run is computed from it in Java.
  private static final String RESUME =
      """
      WITH acted AS (
        UPDATE pgbus.schedule
           SET paused = false, next_run_at = ?, revision = revision + 1, updated_at = now(),
               updated_by = COALESCE(?, current_user)
         WHERE name = ?::text AND revision = ?
        RETURNING *)
      """
          + audited("'schedule_resume'", "a.updated_by");

  // The row's updated_by is the last change's: the delete's own actor is bound.
  private static final String DELETE =
      """
      WITH acted AS (DELETE FROM pgbus.schedule WHERE name = ?::text RETURNING *)
      """
          + audited("'schedule_delete'", "COALESCE(?::text, current_user)");

  // A trigger changes no schedule row: its audit names the job it enqueued, in the same
  // transaction (with no transaction around it, the statement after the enqueue).
  private static final String AUDIT_TRIGGER =
      """
      INSERT INTO pgbus.audit (actor, action, queue, schedule, job_id)
      VALUES (COALESCE(?::text, current_user), 'schedule_trigger', ?::text, ?::text, ?)
      """;

  private static final String GET =
      "SELECT " + COLUMNS + " FROM pgbus.schedule WHERE name = ?::text";

  private static final String LIST =
      "SELECT "
          + COLUMNS
          + " FROM pgbus.schedule WHERE name > COALESCE(?::text, '') ORDER BY name LIMIT ?";

  // Served by schedule_due_idx, oldest first, so a backlog is worked off in order. The names bound
  // last are rows the leader found unreadable: left out, so that they neither fill the batch nor,
  // through NOW_AND_EARLIEST, make every tick follow at once (ScheduleEnqueuer).
  private static final String DUE =
      "SELECT "
          + COLUMNS
          + " FROM pgbus.schedule WHERE NOT paused AND next_run_at <= ?"
          + " AND name OPERATOR(pg_catalog.<>) ALL (?::text[])"
          + " ORDER BY next_run_at LIMIT ?";

  /**
   * The database's clock and the earliest next run in one statement: an idle leader's schedule tick
   * is this alone (the due rows are read only when it shows one due).
   */
  private static final String NOW_AND_EARLIEST =
      "SELECT now(), min(next_run_at) FROM pgbus.schedule WHERE NOT paused"
          + " AND name OPERATOR(pg_catalog.<>) ALL (?::text[])";

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

  // What the leader did with a schedule's latest run (V42): in the transaction of the advance,
  // after
  // it, so the row is the one this tick fenced. The run's instant counts as the last run only when
  // a job was enqueued for it; a skipped run leaves last_run_at, and last_job_id keeps naming the
  // previous run's job, which the next run must wait out again.
  private static final String RECORD_RUN =
      """
      UPDATE pgbus.schedule
         SET last_run_at = COALESCE(?, last_run_at), last_job_id = ?, last_outcome = ?
       WHERE name = ?::text
      """;

  // A run skipped by its overlap policy: audited by the leader, naming the previous run's job
  // (which
  // is why the run was skipped) and the instant of the run skipped.
  private static final String AUDIT_SKIP =
      """
      INSERT INTO pgbus.audit (actor, action, queue, schedule, job_id, detail)
      VALUES (current_user, 'schedule_skip', ?::text, ?::text, ?,
              pg_catalog.jsonb_build_object('run', ?::text, 'overlap', 'skip',
                                            'previous_state', ?::text))
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
      ps.setString(12, overlap(d.overlap()));
      ps.setString(13, actor);
      ps.setString(14, d.name());
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
      return !all(ps).isEmpty();
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
      return !all(ps).isEmpty();
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
      return !all(ps).isEmpty();
    }
  }

  boolean scheduleDelete(Connection c, String name, String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DELETE)) {
      ps.setString(1, name);
      ps.setString(2, actor);
      return !all(ps).isEmpty();
    }
  }

  /** Audits a trigger of schedule {@code name} that enqueued {@code jobId} to {@code queue}. */
  void scheduleAuditTrigger(Connection c, String name, String queue, long jobId, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(AUDIT_TRIGGER)) {
      ps.setString(1, actor);
      ps.setString(2, queue);
      ps.setString(3, name);
      ps.setLong(4, jobId);
      ps.executeUpdate();
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

  /**
   * Unpaused schedules whose next run is at or before {@code now}, oldest first, but those named in
   * {@code skipped}.
   */
  List<Row> scheduleDue(Connection c, Instant now, Collection<String> skipped, int limit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DUE)) {
      setInstant(ps, 1, now);
      ps.setArray(2, c.createArrayOf("text", skipped.toArray()));
      ps.setInt(3, limit);
      return all(ps);
    }
  }

  /**
   * The database's clock, and the earliest next run of an unpaused schedule not skipped (null:
   * none).
   */
  record Clock(Instant now, Instant earliest) {}

  /** The database's clock and the earliest next run, in one statement. */
  Clock scheduleClock(Connection c, Collection<String> skipped) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(NOW_AND_EARLIEST)) {
      ps.setArray(1, c.createArrayOf("text", skipped.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        OffsetDateTime t = rs.getObject(2, OffsetDateTime.class);
        return new Clock(
            rs.getObject(1, OffsetDateTime.class).toInstant(), t == null ? null : t.toInstant());
      }
    }
  }

  /** The earliest next run of an unpaused schedule not named in {@code skipped}, or null. */
  Instant scheduleEarliest(Connection c, Collection<String> skipped) throws SQLException {
    return scheduleClock(c, skipped).earliest();
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

  /**
   * Records what the leader did with the latest run of a schedule it advanced in this transaction:
   * the run enqueued ({@code run}; null for a skip, which leaves last_run_at), the job the next run
   * reads, and the outcome ({@code enqueued}, {@code skipped}, {@code queued}, {@code
   * cancelled_previous}).
   */
  void scheduleRecordRun(Connection c, String name, Instant run, Long jobId, String outcome)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RECORD_RUN)) {
      setInstant(ps, 1, run);
      ps.setObject(2, jobId, Types.BIGINT);
      ps.setString(3, outcome);
      ps.setString(4, name);
      ps.executeUpdate();
    }
  }

  /**
   * Audits the run {@code run} of a schedule skipped because job {@code previous} was in {@code
   * state}.
   */
  void scheduleAuditSkip(
      Connection c, String name, String queue, Instant run, long previous, String state)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(AUDIT_SKIP)) {
      ps.setString(1, queue);
      ps.setString(2, name);
      ps.setLong(3, previous);
      ps.setString(4, run.toString());
      ps.setString(5, state);
      ps.executeUpdate();
    }
  }

  /** Binds name … catch_up_limit, overlap from {@code first}; returns the next index. */
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
    ps.setString(i++, overlap(d.overlap()));
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

  /** The stored form of an overlap policy: its name in lower case ({@code cancel_previous}). */
  static String overlap(OverlapPolicy p) {
    return p.name().toLowerCase(Locale.ROOT);
  }

  /** The policy of a stored value; null for one this build does not know. */
  private static OverlapPolicy overlapOf(String stored) {
    for (OverlapPolicy p : OverlapPolicy.values()) {
      if (overlap(p).equals(stored)) {
        return p;
      }
    }
    return null;
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

  /**
   * A row as a schedule. A row that breaks a rule (written by SQL past a constraint, or by another
   * release) is still returned, its values unchecked and its {@link Schedule#problem} saying why:
   * one bad row must not fail a list, a delete or the leader's tick (issue #23).
   */
  private static Row row(ResultSet rs) throws SQLException {
    Schedule s;
    try {
      ScheduleDefinition d = definition(rs);
      // The expression parses only in its zone: the leader needs both (ScheduleEnqueuer).
      CronSchedule.parse(d.cron(), ZoneId.of(d.zone()));
      s = schedule(rs, d, null);
    } catch (RuntimeException e) {
      s = schedule(rs, storedAsIs(rs), problem(rs.getString(1), e));
    }
    return new Row(s, rs.getLong(16));
  }

  private static ScheduleDefinition definition(ResultSet rs) throws SQLException {
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
    OverlapPolicy overlap = overlapOf(rs.getString(17));
    if (overlap == null) {
      throw new IllegalArgumentException(
          "unknown overlap policy '"
              + rs.getString(17)
              + "': use allow, skip, queue or cancel_previous");
    }
    return d.withOverlap(overlap);
  }

  private static ScheduleDefinition storedAsIs(ResultSet rs) throws SQLException {
    int attempts = rs.getInt(7);
    Integer maxAttempts = rs.wasNull() ? null : attempts;
    int limit = rs.getInt(9);
    Integer catchUp = rs.wasNull() ? null : limit;
    MisfirePolicy policy = null;
    for (MisfirePolicy p : MisfirePolicy.values()) {
      if (p.name().toLowerCase(Locale.ROOT).equals(rs.getString(8))) {
        policy = p;
      }
    }
    return ScheduleDefinition.asStored(
        rs.getString(1),
        rs.getString(2),
        rs.getString(3),
        rs.getString(4),
        rs.getString(5),
        rs.getInt(6),
        maxAttempts,
        policy,
        catchUp,
        overlapOf(rs.getString(17)));
  }

  private static Schedule schedule(ResultSet rs, ScheduleDefinition d, String problem)
      throws SQLException {
    return new Schedule(
        d,
        rs.getBoolean(10),
        instant(rs, 11),
        instant(rs, 12),
        rs.getString(13),
        instant(rs, 14),
        rs.getString(15),
        problem,
        rs.getObject(18, Long.class),
        rs.getString(19));
  }

  /** Why a stored row cannot run, naming the bad value, and the fix. */
  private static String problem(String name, RuntimeException e) {
    String why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    String prefix = "schedule '" + name + "': ";
    if (why.startsWith(prefix)) {
      why = why.substring(prefix.length());
    }
    return why
        + " (the stored row cannot run: fix it with Schedules.update or POST schedules/"
        + name
        + " of the admin API, or delete it)";
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
    return t == null ? null : t.toInstant();
  }

  private static OffsetDateTime utc(Instant t) {
    return t == null ? null : OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
  }
}

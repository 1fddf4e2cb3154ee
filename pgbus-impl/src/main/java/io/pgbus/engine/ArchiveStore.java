package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The history of finished jobs ({@code pgbus.job_history}, V33): the leader moves completed and
 * cancelled jobs out of {@code pgbus.job} a {@link #GRACE} after they finished, in bounded batches,
 * into one partition per UTC day, which it creates ahead and drops whole once the day is past
 * {@code pgbus.retention.completed}. Dead jobs stay in {@code pgbus.job} (a replay revives them in
 * place). Every round is bounded: at most {@link #DDL_PER_ROUND} partitions created and dropped,
 * and batches of moves for at most {@link #MOVE_BUDGET}.
 */
final class ArchiveStore {

  private static final System.Logger LOG = System.getLogger(ArchiveStore.class.getName());

  /**
   * How long a finished job stays in pgbus.job before it moves: reads right after the end (the
   * previous release's result and job reads, which know only pgbus.job) still find it there.
   */
  static final Duration GRACE = Duration.ofMinutes(1);

  /** The width of a partition; a retention shorter than this keeps jobs in pgbus.job. */
  static final Duration DAY = Duration.ofDays(1);

  /** Partitions created, and dropped, per round at most. */
  static final int DDL_PER_ROUND = 4;

  /** Days ahead of today whose partitions exist before their first row. */
  static final int DAYS_AHEAD = 2;

  /** How long one round keeps moving full batches. */
  static final Duration MOVE_BUDGET = Duration.ofSeconds(1);

  /**
   * Each DDL gives up rather than queue: a partition's CREATE and DROP lock pgbus.job_history, and
   * a waiting lock would hold up every reader behind it. The next round tries again.
   */
  private static final String LOCK_TIMEOUT = "SET LOCAL lock_timeout = '1s'";

  private static final DateTimeFormatter DAY_NAME = DateTimeFormatter.ofPattern("yyyyMMdd");
  private static final String PREFIX = "job_history_p";

  // What a round needs to know, in one statement, so that an idle round costs one: the
  // database's clock, the day partitions, whether the safety net holds rows past the retention,
  // the oldest job the moves may take (one probe of job_finalized_queue_idx per state), and the
  // partitions whose counts (V47) are not yet whole.
  private static final String STATE =
      """
      SELECT now(),
             ARRAY(
               SELECT c.relname::text
                 FROM pg_catalog.pg_inherits i
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.inhrelid
                WHERE i.inhparent OPERATOR(pg_catalog.=) 'pgbus.job_history'::pg_catalog.regclass
                  AND c.relname::text OPERATOR(pg_catalog.~) '^job_history_p[0-9]{8}$'),
             EXISTS (SELECT 1 FROM pgbus.job_history_default d
                      WHERE d.finalized_at < now() - ?::float8 * interval '1 millisecond'),
             LEAST(
               (SELECT min(j.finalized_at) FROM pgbus.job j
                 WHERE j.state OPERATOR(pg_catalog.=) 'completed'
                   AND j.finalized_at >= now() - ?::float8 * interval '1 millisecond'),
               (SELECT min(j.finalized_at) FROM pgbus.job j
                 WHERE j.state OPERATOR(pg_catalog.=) 'cancelled'
                   AND j.finalized_at >= now() - ?::float8 * interval '1 millisecond')),
             ARRAY(
               SELECT c.relname::text
                 FROM pg_catalog.pg_inherits i
                 JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.inhrelid
                WHERE i.inhparent OPERATOR(pg_catalog.=) 'pgbus.job_history'::pg_catalog.regclass
                  AND c.relname::text OPERATOR(pg_catalog.~) '^job_history_p[0-9]{8}$'
                  AND NOT EXISTS (SELECT 1 FROM pgbus.job_history_counted k
                                   WHERE k.part OPERATOR(pg_catalog.=) i.inhrelid)
                ORDER BY c.relname)
      """;

  // V47: a partition's counts from its rows, under a SHARE lock of that partition (R__history.sql).
  // The partition is found by name among pgbus.job_history's children, in the SQL text, so that an
  // instance in another schema (SchemaName maps the text, never a bound value) counts its own.
  private static final String RECOUNT =
      """
      SELECT pgbus.job_history_recount(i.inhrelid::pg_catalog.regclass)
        FROM pg_catalog.pg_inherits i
        JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.inhrelid
       WHERE i.inhparent OPERATOR(pg_catalog.=) 'pgbus.job_history'::pg_catalog.regclass
         AND c.relname::text OPERATOR(pg_catalog.=) ?
      """;

  // V47: the counts of partitions dropped, by this round or by any release before.
  private static final String PRUNE_COUNTS = "SELECT pgbus.job_history_count_prune()";

  // The move: one statement, so the job is in pgbus.job or in pgbus.job_history for every
  // snapshot, never in both or neither. As JobStore.PRUNE, the pick locks what it takes, skipping
  // rows another transaction holds (an operator's delete), and the DELETE rechecks the row.
  // Planner trap: the pick is a MATERIALIZED CTE, run once. As `id IN (sub-select)` it may be
  // planned as a sub-plan run again per row, and each run skips the rows this statement already
  // deleted and locks the next ones: a LIMIT of 10 moved 25. Rows older than the retention are left
  // to the prune's DELETE (they
  // go anyway), and rows of a day without its partition wait for it (never the default one).
  // A member of a batch moves once the batch's callback completed or was cancelled, or the batch
  // is gone: the previous release reads the members' results for the callback from pgbus.job.
  private static final String MOVE =
      """
      WITH picked AS MATERIALIZED (
        SELECT f.id FROM pgbus.job f
         WHERE f.state OPERATOR(pg_catalog.=) ANY ('{completed,cancelled}')
           AND f.finalized_at >= ?::timestamptz AND f.finalized_at < ?::timestamptz
           AND (f.batch_id IS NULL OR NOT EXISTS (
                 SELECT 1 FROM pgbus.batch b
                  WHERE b.id OPERATOR(pg_catalog.=) f.batch_id
                    AND (b.callback_job_id IS NULL OR EXISTS (
                          SELECT 1 FROM pgbus.job cb
                           WHERE cb.id OPERATOR(pg_catalog.=) b.callback_job_id
                             AND cb.state OPERATOR(pg_catalog.<>) ALL ('{completed,cancelled}')))))
         LIMIT ?
         FOR UPDATE SKIP LOCKED
      ), moved AS (
        DELETE FROM pgbus.job j
         USING picked p
         WHERE j.id OPERATOR(pg_catalog.=) p.id
           AND j.state OPERATOR(pg_catalog.=) ANY ('{completed,cancelled}')
           AND j.finalized_at >= ?::timestamptz AND j.finalized_at < ?::timestamptz
        RETURNING j.*)
      INSERT INTO pgbus.job_history SELECT * FROM moved
      """;

  // The safety net's rows past the retention (it holds none unless a row was written by hand).
  private static final String PRUNE_DEFAULT =
      """
      DELETE FROM pgbus.job_history_default d
       WHERE d.id IN (SELECT f.id FROM pgbus.job_history_default f
                       WHERE f.finalized_at < ?::timestamptz LIMIT ?)
         AND d.finalized_at < ?::timestamptz
      """;

  /** What one round did. */
  record Round(int created, int dropped, long moved, int recounted) {
    long total() {
      return created + dropped + moved + recounted;
    }
  }

  /**
   * One round: creates the partitions the next moves need, moves batches of {@code batch} jobs,
   * drops the partitions past {@code retention}. Auto-commit connection; each step commits.
   */
  Round archive(Connection c, Duration retention, int batch) throws SQLException {
    Instant now;
    TreeSet<LocalDate> days = new TreeSet<>();
    boolean defaultExpired;
    Instant oldest;
    TreeSet<String> uncounted = new TreeSet<>();
    try (PreparedStatement ps = c.prepareStatement(STATE)) {
      for (int i = 1; i <= 3; i++) {
        ps.setDouble(i, retention.toMillis());
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        now = rs.getTimestamp(1).toInstant();
        for (String name : (String[]) rs.getArray(2).getArray()) {
          days.add(LocalDate.parse(name.substring(PREFIX.length()), DAY_NAME));
        }
        defaultExpired = rs.getBoolean(3);
        Timestamp t = rs.getTimestamp(4);
        oldest = t == null ? null : t.toInstant();
        uncounted.addAll(List.of((String[]) rs.getArray(5).getArray()));
      }
    }
    Instant expired = now.minus(retention);
    int dropped = drop(c, days, expired);
    if (dropped > 0) {
      try (PreparedStatement ps = c.prepareStatement(PRUNE_COUNTS)) {
        ps.executeQuery().close();
      }
    }
    if (defaultExpired) {
      pruneDefault(c, expired, batch);
    }
    if (retention.compareTo(DAY) < 0) {
      // Kept in pgbus.job: a day's partition would outlive it.
      return new Round(0, dropped, 0, recount(c, uncounted, days));
    }
    LocalDate from = day(oldest == null ? now : oldest);
    LocalDate to = day(now).plusDays(DAYS_AHEAD);
    int created = 0;
    Instant coveredUntil = null; // the start of the first day still without its partition
    for (LocalDate d = from; !d.isAfter(to); d = d.plusDays(1)) {
      if (days.contains(d)) {
        continue;
      }
      if (created < DDL_PER_ROUND && create(c, d)) {
        created++;
        days.add(d);
        uncounted.add(name(d)); // empty: its recount is one lock and one empty scan
      } else if (coveredUntil == null) {
        coveredUntil = start(d);
      }
    }
    int recounted = recount(c, uncounted, days);
    Instant until = now.minus(GRACE);
    if (coveredUntil != null && coveredUntil.isBefore(until)) {
      until = coveredUntil;
    }
    long moved = 0;
    if (oldest != null && oldest.isBefore(until)) {
      long deadline = System.nanoTime() + MOVE_BUDGET.toNanos();
      int n;
      do {
        n = move(c, expired, until, batch);
        moved += n;
      } while (n == batch && System.nanoTime() - deadline < 0);
    }
    return new Round(created, dropped, moved, recounted);
  }

  /**
   * Counts at most {@link #DDL_PER_ROUND} uncounted day partitions (V47) that still exist, oldest
   * day first; each in its own transaction under a 1 s lock_timeout.
   */
  private int recount(Connection c, TreeSet<String> uncounted, TreeSet<LocalDate> days)
      throws SQLException {
    int done = 0;
    for (String part : uncounted) {
      if (done >= DDL_PER_ROUND) {
        break;
      }
      // A day this round dropped is gone from days, and its counts with it.
      if (days.contains(LocalDate.parse(part.substring(PREFIX.length()), DAY_NAME))
          && recount(c, part)) {
        done++;
      }
    }
    return done;
  }

  /** Counts one partition from its rows; false when a lock stops it (the next round retries). */
  boolean recount(Connection c, String part) throws SQLException {
    // Only names read from pg_class of pgbus.job_history's partitions reach the statement, bound.
    return transaction(
        c,
        "count the jobs of history partition " + part,
        k -> {
          try (PreparedStatement ps = k.prepareStatement(RECOUNT)) {
            ps.setString(1, part);
            ps.executeQuery().close();
          }
        });
  }

  /** Moves at most {@code batch} finished jobs of [from, until) into the history. */
  int move(Connection c, Instant from, Instant until, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(MOVE)) {
      ps.setTimestamp(1, Timestamp.from(from));
      ps.setTimestamp(2, Timestamp.from(until));
      ps.setInt(3, batch);
      ps.setTimestamp(4, Timestamp.from(from));
      ps.setTimestamp(5, Timestamp.from(until));
      return ps.executeUpdate();
    }
  }

  /** Creates the partition of {@code day}; false when a lock or the default's rows stop it. */
  boolean create(Connection c, LocalDate day) throws SQLException {
    // Only digits of a LocalDate and fixed text: nothing from outside reaches the DDL.
    String ddl =
        "CREATE TABLE IF NOT EXISTS pgbus."
            + name(day)
            + " PARTITION OF pgbus.job_history FOR VALUES FROM ('"
            + start(day)
            + "') TO ('"
            + start(day.plusDays(1))
            + "')";
    return transaction(
        c,
        "create the history partition of " + day,
        k -> {
          try (Statement st = k.createStatement()) {
            st.execute(ddl);
          }
          pack(k, name(day));
        });
  }

  // V60: a day partition's btrees packed full. Its rows arrive in the order jobs finished, so its
  // indexes grow at their right end, where a btree split keeps 90% (the default fillfactor) for
  // later inserts in the middle of the page that never come: 10% of every page stays empty.
  // Partitioned indexes take no storage options (PostgreSQL refuses them), so each partition's
  // own btrees get it right after CREATE, while empty, in the same transaction.
  private static final String BTREES =
      """
      SELECT i.indexrelid::pg_catalog.regclass::text
        FROM pg_catalog.pg_index i
        JOIN pg_catalog.pg_class x ON x.oid OPERATOR(pg_catalog.=) i.indexrelid
        JOIN pg_catalog.pg_am a ON a.oid OPERATOR(pg_catalog.=) x.relam
        JOIN pg_catalog.pg_inherits h ON h.inhrelid OPERATOR(pg_catalog.=) i.indrelid
        JOIN pg_catalog.pg_class p ON p.oid OPERATOR(pg_catalog.=) h.inhrelid
       WHERE h.inhparent OPERATOR(pg_catalog.=) 'pgbus.job_history'::pg_catalog.regclass
         AND p.relname::text OPERATOR(pg_catalog.=) ?
         AND a.amname OPERATOR(pg_catalog.=) 'btree'
      """;

  private static void pack(Connection c, String part) throws SQLException {
    List<String> btrees = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(BTREES)) {
      ps.setString(1, part);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          btrees.add(rs.getString(1));
        }
      }
    }
    try (Statement st = c.createStatement()) {
      for (String btree : btrees) {
        // A name regclass printed from pg_index (quoted where it needs it), not outside input.
        st.execute("ALTER INDEX " + btree + " SET (fillfactor = 100)");
      }
    }
  }

  private int drop(Connection c, TreeSet<LocalDate> days, Instant expired) throws SQLException {
    List<LocalDate> gone = new ArrayList<>();
    for (LocalDate d : days) {
      if (start(d.plusDays(1)).isAfter(expired) || gone.size() >= DDL_PER_ROUND) {
        break;
      }
      // The whole day is past the retention: one DROP instead of a DELETE per row.
      if (ddl(c, "DROP TABLE IF EXISTS pgbus." + name(d), "drop the history partition of " + d)) {
        gone.add(d);
      }
    }
    gone.forEach(days::remove);
    return gone.size();
  }

  private static boolean ddl(Connection c, String ddl, String what) throws SQLException {
    return transaction(
        c,
        what,
        k -> {
          try (Statement st = k.createStatement()) {
            st.execute(ddl);
          }
        });
  }

  @FunctionalInterface
  private interface Step {
    void run(Connection c) throws SQLException;
  }

  private static boolean transaction(Connection c, String what, Step step) throws SQLException {
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute(LOCK_TIMEOUT);
      step.run(c);
      c.commit();
      return true;
    } catch (SQLException e) {
      c.rollback();
      // 55P03 lock_not_available: a reader held the table for a second; 23514 check_violation:
      // the default partition holds rows of that day. Either way the next round tries again.
      if ("55P03".equals(e.getSQLState()) || "23514".equals(e.getSQLState())) {
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus could not {0} this round ({1}); it tries again next round",
            what,
            e.getMessage());
        return false;
      }
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }

  private void pruneDefault(Connection c, Instant expired, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PRUNE_DEFAULT)) {
      ps.setTimestamp(1, Timestamp.from(expired));
      ps.setInt(2, batch);
      ps.setTimestamp(3, Timestamp.from(expired));
      ps.executeUpdate();
    }
  }

  static String name(LocalDate day) {
    return PREFIX + DAY_NAME.format(day);
  }

  private static LocalDate day(Instant t) {
    return LocalDate.ofInstant(t, ZoneOffset.UTC);
  }

  private static Instant start(LocalDate day) {
    return day.atStartOfDay(ZoneOffset.UTC).toInstant();
  }
}

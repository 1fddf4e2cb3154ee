package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;

/**
 * What pgbus.job looks like on disk and to vacuum, read from the catalog in one statement, and the
 * fixtures that grow it: finished jobs kept by retention, or a backlog waiting in one queue. Filled
 * with INSERT ... SELECT generate_series, so ten million rows take minutes, not hours.
 */
final class JobTable {

  /**
   * One look at pgbus.job.
   *
   * @param heapBytes the table without indexes and TOAST
   * @param indexBytes all its indexes
   * @param claimIndexBytes job_claim_idx, the partial index the claim reads
   * @param liveTuples pg_stat_user_tables.n_live_tup
   * @param deadTuples pg_stat_user_tables.n_dead_tup
   * @param autovacuums autovacuum_count since the database was created
   * @param autoanalyzes autoanalyze_count
   */
  record Sample(
      long heapBytes,
      long indexBytes,
      long claimIndexBytes,
      long liveTuples,
      long deadTuples,
      long autovacuums,
      long autoanalyzes) {

    static String mb(long bytes) {
      return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }
  }

  private static final String SAMPLE =
      """
      SELECT pg_relation_size('pgbus.job'), pg_indexes_size('pgbus.job'),
             pg_relation_size('pgbus.job_claim_idx'),
             s.n_live_tup, s.n_dead_tup, s.autovacuum_count, s.autoanalyze_count
        FROM pg_stat_user_tables s
       WHERE s.relid = 'pgbus.job'::regclass
      """;

  // Completed jobs of the last 20 hours, inside the default one-day retention, so the leader's
  // pruning keeps them for the whole run: the table a user has after a busy day.
  private static final String FINISHED =
      """
      INSERT INTO pgbus.job (queue, state, payload, attempt, run_at, created_at, attempted_at,
                             attempted_by, finalized_at)
      SELECT ?, 'completed', jsonb_build_object('n', i), 1, t, t, t, 'bench-fill',
             t + interval '50 milliseconds'
        FROM generate_series(1, ?) AS i,
             LATERAL (SELECT now() - interval '20 hours'
                             + (i::float8 / ?) * interval '19 hours' AS t) tt
      """;

  private static final String WAITING =
      """
      INSERT INTO pgbus.job (queue, payload, run_at, created_at)
      SELECT ?, jsonb_build_object('n', i), now() - interval '1 hour', now() - interval '1 hour'
        FROM generate_series(1, ?) AS i
      """;

  // The leader's moves (ArchiveStore, V33) done at once: the day partitions the finished jobs
  // need, then every completed job of pgbus.job into pgbus.job_history in one statement.
  private static final String HISTORY_PARTITIONS =
      """
      DO $$
      DECLARE d date;
      BEGIN
        FOR d IN SELECT g::date FROM generate_series(
                   (SELECT (min(finalized_at) AT TIME ZONE 'UTC')::date FROM pgbus.job
                     WHERE state = 'completed'),
                   (now() AT TIME ZONE 'UTC')::date + 2, interval '1 day') g LOOP
          EXECUTE format('CREATE TABLE IF NOT EXISTS pgbus.job_history_p%s PARTITION OF'
                         ' pgbus.job_history FOR VALUES FROM (%L) TO (%L)',
                         to_char(d, 'YYYYMMDD'), d::timestamp AT TIME ZONE 'UTC',
                         (d + 1)::timestamp AT TIME ZONE 'UTC');
        END LOOP;
      END $$
      """;

  private static final String MOVE_FINISHED =
      """
      WITH m AS (DELETE FROM pgbus.job WHERE state = 'completed' RETURNING *)
      INSERT INTO pgbus.job_history SELECT * FROM m
      """;

  private JobTable() {}

  /**
   * Moves every completed job into pgbus.job_history, as the leader does in batches (V33), and
   * vacuums pgbus.job; returns the jobs moved.
   */
  static long moveFinishedToHistory(Connection c) throws SQLException {
    long n;
    try (var st = c.createStatement()) {
      st.execute(HISTORY_PARTITIONS);
      n = st.executeUpdate(MOVE_FINISHED);
      st.execute("VACUUM ANALYZE pgbus.job");
      st.execute("ANALYZE pgbus.job_history");
    }
    return n;
  }

  static Sample sample(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SAMPLE);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return new Sample(
          rs.getLong(1),
          rs.getLong(2),
          rs.getLong(3),
          rs.getLong(4),
          rs.getLong(5),
          rs.getLong(6),
          rs.getLong(7));
    }
  }

  /** Adds {@code count} completed jobs to {@code queue}, a million per transaction. */
  static void addFinished(Connection c, String queue, long count, Harness h) throws SQLException {
    insert(c, FINISHED, queue, count, h, "finished");
  }

  /** Adds {@code count} available, due jobs to {@code queue}, a million per transaction. */
  static void addWaiting(Connection c, String queue, long count, Harness h) throws SQLException {
    insert(c, WAITING, queue, count, h, "waiting");
  }

  private static void insert(
      Connection c, String sql, String queue, long count, Harness h, String what)
      throws SQLException {
    long done = 0;
    while (done < count) {
      long n = Math.min(1_000_000, count - done);
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setString(1, queue);
        ps.setLong(2, n);
        if (sql == FINISHED) {
          ps.setDouble(3, n);
        }
        ps.executeUpdate();
      }
      done += n;
      h.log("  %,d of %,d %s jobs inserted", done, count, what);
    }
    try (var st = c.createStatement()) {
      st.execute("VACUUM ANALYZE pgbus.job");
    }
  }
}

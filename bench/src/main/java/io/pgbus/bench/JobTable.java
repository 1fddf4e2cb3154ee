package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;

/**
 * What pgbus.job and pgbus.job_history look like on disk and to vacuum, read from the catalog in
 * one statement, and the fixtures that grow them: finished jobs kept by retention (in the history's
 * day partitions, where the leader's archive puts them), or a backlog waiting in one queue. Filled
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
   * @param historyBytes pgbus.job_history: every partition's heap, indexes and TOAST
   */
  record Sample(
      long heapBytes,
      long indexBytes,
      long claimIndexBytes,
      long liveTuples,
      long deadTuples,
      long autovacuums,
      long autoanalyzes,
      long historyBytes) {

    static String mb(long bytes) {
      return String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }
  }

  private static final String SAMPLE =
      """
      SELECT pg_relation_size('pgbus.job'), pg_indexes_size('pgbus.job'),
             pg_relation_size('pgbus.job_claim_idx'),
             s.n_live_tup, s.n_dead_tup, s.autovacuum_count, s.autoanalyze_count,
             (SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)
                FROM pg_partition_tree('pgbus.job_history') t WHERE t.isleaf)
        FROM pg_stat_user_tables s
       WHERE s.relid = 'pgbus.job'::regclass
      """;

  // Completed jobs of the last 20 hours, inside the default one-day retention, so the leader's
  // pruning keeps them for the whole run: the history a user has after a busy day. Straight into
  // pgbus.job_history, where the leader's archive (V33) moves them a minute after they end: ids
  // from pgbus.job's sequence in time order, the day partitions made first (HISTORY_PARTITIONS).
  private static final String FINISHED =
      """
      INSERT INTO pgbus.job_history (id, queue, state, priority, payload, attempt, max_attempts,
                                     run_at, errors, created_at, attempted_at, attempted_by,
                                     finalized_at, linked, attempt_base)
      SELECT nextval('pgbus.job_id_seq'), ?, 'completed', 0, jsonb_build_object('n', i), 1, 25,
             t, '[]', t, t, 'bench-fill', t + interval '50 milliseconds', false, 0
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

  // The day partitions the finished jobs need (the leader's ArchiveStore makes them before the
  // first row of a day): from 21 hours ago to two days ahead, each counted while empty (V47), as
  // the leader's own are, so that no recount of 10M rows runs during a measurement.
  private static final String HISTORY_PARTITIONS =
      """
      DO $$
      DECLARE d date; p text;
      BEGIN
        FOR d IN SELECT g::date FROM generate_series(
                   ((now() - interval '21 hours') AT TIME ZONE 'UTC')::date,
                   (now() AT TIME ZONE 'UTC')::date + 2, interval '1 day') g LOOP
          p := 'job_history_p' || to_char(d, 'YYYYMMDD');
          IF to_regclass('pgbus.' || p) IS NULL THEN
            EXECUTE format('CREATE TABLE pgbus.%I PARTITION OF pgbus.job_history'
                           ' FOR VALUES FROM (%L) TO (%L)', p, d::timestamp AT TIME ZONE 'UTC',
                           (d + 1)::timestamp AT TIME ZONE 'UTC');
            PERFORM pgbus.job_history_recount(('pgbus.' || p)::regclass);
          END IF;
        END LOOP;
      END $$
      """;

  private JobTable() {}

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
          rs.getLong(7),
          rs.getLong(8));
    }
  }

  /**
   * Adds {@code count} completed jobs of {@code queue} to pgbus.job_history, a million per
   * transaction.
   */
  static void addFinished(Connection c, String queue, long count, Harness h) throws SQLException {
    try (var st = c.createStatement()) {
      st.execute(HISTORY_PARTITIONS);
    }
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
      st.execute(sql == FINISHED ? "VACUUM ANALYZE pgbus.job_history" : "VACUUM ANALYZE pgbus.job");
    }
  }
}

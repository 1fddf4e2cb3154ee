package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Partitions (issue #27): Oban Pro's DynamicPartitioner shape, a synthetic week of finished jobs,
 * kept the old way beside the new one in the same run. Two databases with the same pgbus schema and
 * the same jobs: in {@code old}, seven days of completed jobs stay in {@code pgbus.job}, as before
 * V33 (or with a retention under a day); in {@code new}, they are in {@code pgbus.job_history}'s
 * day partitions, where the leader moves them. Each day's jobs are enqueued, claimed and completed
 * a minute at a time (an insert and two updates each; VACUUM when autovacuum's default rule would),
 * the new layout moving the jobs that finished a minute before to history, as the leader does
 * (ArchiveStore.GRACE). Both then hold the same live backlog. Measured on each: the size of the job
 * storage; pruning the oldest day (old: the pruner's {@code DELETE} of 1,000 rows, repeated until
 * none is left; new: {@code DROP TABLE} of the day's partition, as {@code ArchiveStore} does);
 * {@code VACUUM} after the prune; the bloat left (the size after vacuum against the size after
 * {@code VACUUM FULL}, which rewrites compactly); {@code REINDEX} of the table that takes the churn
 * ({@code pgbus.job} in both: history partitions are written once), and of all job storage.
 */
final class PartitionWorkload {

  private static final int DAYS = 7;
  private static final String QUEUE = "part";

  // A slice of one day's jobs (day 0 is the oldest), enqueued over that day: then claimed and
  // completed by the two updates a worker makes, so the table sees the churn real jobs bring.
  private static final String ENQUEUE_SLICE =
      """
      INSERT INTO pgbus.job (queue, payload, run_at, created_at)
      SELECT ?, jsonb_build_object('order', i, 'customer', 'c' || (i % 9973)), t, t
        FROM generate_series(?, ?) AS i,
             LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                             - (? - ?) * interval '1 day'
                             + (i::float8 / (? + 1)) * interval '1 day' AS t) tt
      """;

  private static final String CLAIM_SLICE =
      """
      UPDATE pgbus.job
         SET state = 'running', attempt = 1, attempted_at = run_at, attempted_by = 'bench-part',
             lease_expires_at = run_at + interval '5 minutes'
       WHERE queue = ? AND state = 'available'
      """;

  private static final String COMPLETE_SLICE =
      """
      UPDATE pgbus.job
         SET state = 'completed', finalized_at = attempted_at + interval '40 milliseconds',
             lease_expires_at = NULL
       WHERE queue = ? AND state = 'running'
      """;

  /**
   * Slices per day, a minute each: the leader moves a job a minute after it ended
   * (ArchiveStore.GRACE), so after each minute's jobs the new layout moves the minute before.
   */
  private static final int SLICES = 1_440;

  private static final String BACKLOG =
      """
      INSERT INTO pgbus.job (queue, payload, run_at, created_at)
      SELECT ?, jsonb_build_object('order', i), now(), now() FROM generate_series(1, ?) AS i
      """;

  private static final String PARTITIONS =
      """
      DO $$
      DECLARE d date;
      BEGIN
        FOR d IN SELECT g::date FROM generate_series(
                   (now() AT TIME ZONE 'UTC')::date - 8, (now() AT TIME ZONE 'UTC')::date + 1,
                   interval '1 day') g LOOP
          EXECUTE format('CREATE TABLE IF NOT EXISTS pgbus.job_history_p%s PARTITION OF'
                         ' pgbus.job_history FOR VALUES FROM (%L) TO (%L)',
                         to_char(d, 'YYYYMMDD'), d::timestamp AT TIME ZONE 'UTC',
                         (d + 1)::timestamp AT TIME ZONE 'UTC');
          -- As ArchiveStore.create (V60): the new partition's btrees packed full.
          EXECUTE (SELECT string_agg(format('ALTER INDEX %s SET (fillfactor = 100)',
                                            i.indexrelid::regclass), '; ')
                     FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
                     JOIN pg_am a ON a.oid = x.relam
                    WHERE i.indrelid = format('pgbus.job_history_p%s',
                                              to_char(d, 'YYYYMMDD'))::regclass
                      AND a.amname = 'btree');
        END LOOP;
      END $$
      """;

  // The jobs that finished before this slice's first one, a minute ago: ArchiveStore's GRACE.
  private static final String MOVE =
      """
      WITH m AS (
        DELETE FROM pgbus.job
         WHERE state = 'completed'
           AND finalized_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                              - (? - ?) * interval '1 day'
                              + (?::float8 / (? + 1)) * interval '1 day'
        RETURNING *)
      INSERT INTO pgbus.job_history SELECT * FROM m
      """;

  // The oldest day the old way: JobStore's pruner statement (pgbus.prune-batch rows, default
  // 1,000, each its own transaction), repeated until it finds none.
  private static final int PRUNE_BATCH = 1_000;

  private static final String PRUNE_OLDEST =
      """
      WITH picked AS MATERIALIZED (
             SELECT f.id FROM pgbus.job f
              WHERE f.state = 'completed'
                AND f.finalized_at < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                                     - ? * interval '1 day'
              LIMIT ?
              FOR UPDATE SKIP LOCKED)
      DELETE FROM pgbus.job j
       WHERE j.id IN (SELECT p.id FROM picked p) AND j.state = 'completed'
      """;

  // The oldest day's partition, named as ArchiveStore names them.
  private static final String OLDEST_PARTITION =
      """
      SELECT 'pgbus.job_history_p'
             || to_char((now() AT TIME ZONE 'UTC')::date - ?, 'YYYYMMDD')
      """;

  // Heap, indexes and TOAST of the job storage: pgbus.job, plus every history partition.
  private static final String SIZE =
      """
      SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'pgbus' AND c.relkind = 'r'
         AND (c.relname = 'job' OR c.relname LIKE 'job\\_history\\_%')
      """;

  private final Harness h;

  PartitionWorkload(Harness h) {
    this.h = h;
  }

  /** What one layout measured. */
  private record Measure(
      long bytes,
      double pruneMs,
      double vacuumMs,
      long bloatBytes,
      double reindexHotMs,
      double reindexAllMs,
      long rows) {}

  void run(Results results) throws Exception {
    int perDay = h.options.partitionDayJobs();
    int backlog = Math.max(1_000, perDay / 10);
    Measure old;
    Measure partitioned;
    try (BenchDatabase oldDb = h.server.createDatabase("part_old");
        BenchDatabase newDb = h.server.createDatabase("part_new")) {
      var pgbus = new PgbusSystem();
      h.install(pgbus, oldDb);
      h.install(pgbus, newDb);
      try (Connection o = oldDb.connect("bench-part");
          Connection n = newDb.connect("bench-part")) {
        fill(o, "old", perDay, backlog, false);
        try (Statement st = n.createStatement()) {
          st.execute(PARTITIONS);
        }
        fill(n, "new", perDay, backlog, true);
        old = measureOld(o);
        partitioned = measureNew(n);
      }
    }
    var rows = new ArrayList<List<String>>();
    rows.add(
        row(
            "job storage after the week, MB",
            old.bytes / 1048576.0,
            partitioned.bytes / 1048576.0,
            1 - (double) partitioned.bytes / old.bytes,
            "smaller"));
    rows.add(row("prune the oldest day, ms", old.pruneMs, partitioned.pruneMs, 0, "faster"));
    rows.add(row("VACUUM after the prune, ms", old.vacuumMs, partitioned.vacuumMs, 0, "faster"));
    rows.add(
        row(
            "bloat after vacuum, MB",
            old.bloatBytes / 1048576.0,
            partitioned.bloatBytes / 1048576.0,
            old.bloatBytes == 0 ? 0 : 1 - (double) partitioned.bloatBytes / old.bloatBytes,
            "less"));
    rows.add(
        row(
            "REINDEX the churning table, ms",
            old.reindexHotMs,
            partitioned.reindexHotMs,
            0,
            "faster"));
    rows.add(
        row(
            "REINDEX all job storage, ms",
            old.reindexAllMs,
            partitioned.reindexAllMs,
            0,
            "faster"));
    results.section(
        "Partitions: a week of finished jobs, old layout against new",
        String.format(
                Locale.ROOT,
                "Oban Pro's DynamicPartitioner shape, scaled: %d days × %,d jobs, each enqueued,"
                    + " claimed and completed a minute at a time (an insert, two updates; VACUUM when"
                    + " autovacuum's default rule would), then %,d waiting; %,d rows after the prune"
                    + " (old), %,d (new); two databases of the same schema. Old: every finished job stays in pgbus.job (before V33,"
                    + " or retention under a day). New: they are in pgbus.job_history's day"
                    + " partitions. Prune: the pruner's DELETE of 1,000 rows (pgbus.prune-batch),"
                    + " repeated over the oldest day, against DROP TABLE of its partition. Bloat: size after VACUUM minus size after VACUUM FULL. The"
                    + " churning table is pgbus.job in both (history partitions are written once)."
                    + " Oban's published ratios: 40%% smaller, 95%% less bloat, vacuum 2.5×,"
                    + " reindex 2.1×, pruning 1000×.%n%n",
                DAYS,
                perDay,
                backlog,
                old.rows,
                partitioned.rows)
            + Results.table(List.of("measure", "old", "new", "new vs old"), rows));
    results.target(
        "partition pruning (Oban 1000×)",
        "> 1000× faster than DELETE",
        Stats.f("%.0f×", old.pruneMs / partitioned.pruneMs),
        old.pruneMs / partitioned.pruneMs > 1000,
        perDay + " jobs a day");
    results.target(
        "vacuum after prune (Oban 2.5×)",
        "> 2.5× faster",
        Stats.f("%.1f×", old.vacuumMs / partitioned.vacuumMs),
        old.vacuumMs / partitioned.vacuumMs > 2.5,
        "");
    results.target(
        "reindex (Oban 2.1×)",
        "> 2.1× faster (the churning table)",
        Stats.f("%.1f×", old.reindexHotMs / partitioned.reindexHotMs),
        old.reindexHotMs / partitioned.reindexHotMs > 2.1,
        "");
    double smaller = 1 - (double) partitioned.bytes / old.bytes;
    results.target(
        "storage size (Oban 40% smaller)",
        "≥ 40% smaller", Stats.f("%.0f%% smaller", 100 * smaller), smaller >= 0.40, "");
    double lessBloat =
        old.bloatBytes == 0 ? 0 : 1 - (double) partitioned.bloatBytes / old.bloatBytes;
    results.target(
        "bloat after vacuum (Oban 95% less)",
        "≥ 95% less", Stats.f("%.0f%% less", 100 * lessBloat), lessBloat >= 0.95, "");
  }

  private static List<String> row(String what, double old, double neu, double share, String word) {
    String vs =
        word.equals("faster")
            ? Stats.f("%.1f× faster", neu == 0 ? Double.POSITIVE_INFINITY : old / neu)
            : Stats.f("%.0f%% ", 100 * share) + word;
    return List.of(what, Stats.f("%.1f", old), Stats.f("%.1f", neu), vs);
  }

  private void fill(Connection c, String label, int perDay, int backlog, boolean move)
      throws SQLException {
    int slice = Math.max(1, perDay / SLICES);
    long dead = 0;
    long live = 0;
    for (int day = 0; day < DAYS; day++) {
      for (int from = 1; from <= perDay; from += slice) {
        int to = Math.min(perDay, from + slice - 1);
        try (PreparedStatement ps = c.prepareStatement(ENQUEUE_SLICE)) {
          ps.setString(1, QUEUE);
          ps.setInt(2, from);
          ps.setInt(3, to);
          ps.setInt(4, DAYS);
          ps.setInt(5, day);
          ps.setInt(6, perDay);
          ps.executeUpdate();
        }
        for (String sql : List.of(CLAIM_SLICE, COMPLETE_SLICE)) {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, QUEUE);
            ps.executeUpdate();
          }
        }
        int batch = to - from + 1;
        dead += 2L * batch; // the two updates leave one dead version each
        live += batch;
        if (move) {
          try (PreparedStatement ps = c.prepareStatement(MOVE)) {
            ps.setInt(1, DAYS);
            ps.setInt(2, day);
            ps.setInt(3, from);
            ps.setInt(4, perDay);
            int moved = ps.executeUpdate();
            dead += moved;
            live -= moved;
          }
        }
        try (Statement st = c.createStatement()) {
          // Autovacuum's rule at its default settings: when the dead versions pass 50 + 20% of
          // the table's rows. Freed space is then reused by the next slices.
          if (dead > 50 + 0.2 * live) {
            st.execute("VACUUM pgbus.job");
            dead = 0;
          }
        }
      }
      h.log("partitions: %s day %d of %d done (%,d jobs)", label, day + 1, DAYS, perDay);
    }
    try (PreparedStatement ps = c.prepareStatement(BACKLOG)) {
      ps.setString(1, QUEUE);
      ps.setInt(2, backlog);
      ps.executeUpdate();
    }
    try (Statement st = c.createStatement()) {
      st.execute("VACUUM ANALYZE pgbus.job");
      if (move) {
        st.execute("VACUUM ANALYZE pgbus.job_history");
      }
    }
  }

  private Measure measureOld(Connection c) throws SQLException {
    long bytes = size(c);
    double prune =
        timed(
            c,
            () -> {
              long deleted = 0;
              int n;
              try (PreparedStatement ps = c.prepareStatement(PRUNE_OLDEST)) {
                ps.setInt(1, DAYS - 1);
                ps.setInt(2, PRUNE_BATCH);
                while ((n = ps.executeUpdate()) > 0) {
                  deleted += n;
                }
              }
              h.log("partitions: old prune deleted %,d rows", deleted);
            });
    return after(c, "old", bytes, prune, "REINDEX TABLE pgbus.job", "REINDEX TABLE pgbus.job");
  }

  private Measure measureNew(Connection c) throws SQLException {
    long bytes = size(c);
    String oldest;
    try (PreparedStatement ps = c.prepareStatement(OLDEST_PARTITION)) {
      ps.setInt(1, DAYS);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        oldest = rs.getString(1);
      }
    }
    double prune =
        timed(
            c,
            () -> {
              try (Statement st = c.createStatement()) {
                st.execute("DROP TABLE " + oldest);
              }
            });
    h.log("partitions: new prune dropped %s", oldest);
    // History partitions are written once and never updated: the churn is pgbus.job's alone.
    return after(
        c,
        "new",
        bytes,
        prune,
        "REINDEX TABLE pgbus.job",
        "REINDEX TABLE pgbus.job; REINDEX TABLE pgbus.job_history");
  }

  private Measure after(
      Connection c, String label, long bytes, double prune, String reindexHot, String reindexAll)
      throws SQLException {
    // The vacuum a prune calls for: the old layout's heap and indexes hold the dead day; the
    // new layout vacuums the tables that remain (pgbus.job and the partitions), as autovacuum
    // would.
    String vacuum =
        label.equals("old") ? "VACUUM pgbus.job" : "VACUUM pgbus.job, pgbus.job_history";
    double vac = timed(c, () -> exec(c, vacuum));
    long afterVacuum = size(c);
    double hot = timed(c, () -> exec(c, reindexHot));
    double all = timed(c, () -> exec(c, reindexAll));
    exec(
        c,
        label.equals("old") ? "VACUUM FULL pgbus.job" : "VACUUM FULL pgbus.job, pgbus.job_history");
    long compact = size(c);
    long rows;
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT (SELECT count(*) FROM pgbus.job) + (SELECT count(*) FROM pgbus.job_history)")) {
      rs.next();
      rows = rs.getLong(1);
    }
    h.log(
        "partitions: %s %.1f MB, prune %.1f ms, vacuum %.1f ms, bloat %.1f MB, reindex %.1f / %.1f ms",
        label, bytes / 1048576.0, prune, vac, (afterVacuum - compact) / 1048576.0, hot, all);
    return new Measure(bytes, prune, vac, Math.max(0, afterVacuum - compact), hot, all, rows);
  }

  private static long size(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(SIZE)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void exec(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String s : sql.split(";")) {
        st.execute(s);
      }
    }
  }

  private interface Step {
    void run() throws SQLException;
  }

  private static double timed(Connection c, Step step) throws SQLException {
    long t0 = System.nanoTime();
    step.run();
    return (System.nanoTime() - t0) / 1e6;
  }
}

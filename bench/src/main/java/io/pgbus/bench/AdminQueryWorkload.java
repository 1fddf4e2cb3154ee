package io.pgbus.bench;

import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobState;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.FleetStore;
import io.pgbus.engine.HistoryStore;
import io.pgbus.engine.JobAdminStore;
import io.pgbus.engine.JobAdminStore.Action;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.Schema;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * ADMIN: the queries behind the REST admin API (JobAdmin, docs/admin-api.md) on a table of {@code
 * --admin-jobs} jobs (a million by default) in 8 queues and every state, p50 and p95 of each; and
 * what the V8 indexes cost a single-job enqueue, with and without them.
 */
final class AdminQueryWorkload {

  private static final int QUEUES = 8;
  private static final int WARM_UP = 10;
  private static final int SAMPLES = 100;

  private final Harness h;
  private final JobAdminStore admin = new JobAdminStore();
  private final HistoryStore history = new HistoryStore();
  private long rollupNs; // what rollUpAMinute's own statement took, for the log

  AdminQueryWorkload(Harness h) {
    this.h = h;
  }

  @FunctionalInterface
  private interface Query {
    void run(Connection c, int i) throws SQLException;
  }

  private record Row(String name, double p50, double p95, double max, boolean action) {}

  void run(Results results) throws Exception {
    int jobs = h.options.adminJobs();
    var rows = new ArrayList<Row>();
    String enqueueCost;
    try (BenchDatabase db = h.server.createDatabase("admin");
        var ds = db.pool("bench-admin", 4, 0)) {
      Schema.migrate(ds);
      try (Connection c = ds.getConnection()) {
        enqueueCost = enqueueCost(c);
        long t0 = System.nanoTime();
        int older = h.options.adminHistory();
        if (older > 0) {
          fillHistory(c, older);
          h.log(
              "ADMIN added %,d finished jobs over the 7 days before in %.1f s",
              older, (System.nanoTime() - t0) / 1e9);
          t0 = System.nanoTime();
        }
        fill(c, jobs);
        h.log("ADMIN filled %,d jobs in %.1f s", jobs, (System.nanoTime() - t0) / 1e9);
        String backfill = recountHistory(c);
        h.log("ADMIN %s", backfill);
        String moveCost = moveCost(c);
        h.log("ADMIN %s", moveCost);
        enqueueCost = enqueueCost + "\n\n" + backfill + "\n\n" + moveCost;
        long someDead =
            first(c, "SELECT id FROM pgbus.job WHERE state = 'dead' ORDER BY id LIMIT 1");
        long deepCursor =
            first(c, "SELECT id FROM pgbus.job_all ORDER BY id LIMIT 1 OFFSET " + jobs / 2);
        JobFilter q3 = JobFilter.all().withQueue("q3");
        JobFilter q3dead = q3.withStates(JobState.DEAD);
        rows.add(
            measure(
                c,
                "search, no filter, first page of 50",
                (k, i) -> page(k, JobFilter.all(), null)));
        rows.add(
            measure(
                c,
                "search, no filter, a page in the middle (keyset)",
                (k, i) -> page(k, JobFilter.all(), deepCursor)));
        rows.add(measure(c, "search queue", (k, i) -> page(k, q3, null)));
        rows.add(measure(c, "search queue + state dead", (k, i) -> page(k, q3dead, null)));
        rows.add(
            measure(
                c,
                "search queue + state dead, a page in the middle",
                (k, i) -> page(k, q3dead, deepCursor)));
        rows.add(
            measure(
                c,
                "search state available (all queues)",
                (k, i) -> page(k, JobFilter.all().withStates(JobState.AVAILABLE), null)));
        rows.add(
            measure(
                c,
                "search state running, the rarest (all queues)",
                (k, i) -> page(k, JobFilter.all().withStates(JobState.RUNNING), null)));
        rows.add(
            measure(
                c,
                "search queue + states running, retryable",
                (k, i) -> page(k, q3.withStates(JobState.RUNNING, JobState.RETRYABLE), null)));
        rows.add(
            measure(
                c,
                "search queue + dead + payload @> (one match)",
                (k, i) ->
                    page(
                        k,
                        q3dead.withPayloadContaining("{\"order\": " + (someDead + 8L * i) + "}"),
                        null)));
        rows.add(
            measure(
                c,
                "search unique key",
                (k, i) -> page(k, JobFilter.all().withUniqueKey("key-" + (i * 997 % jobs)), null)));
        rows.add(
            measure(
                c,
                "search created in a 10-minute range",
                (k, i) ->
                    page(
                        k,
                        JobFilter.all()
                            .withCreated(
                                java.time.Instant.now().minusSeconds(7200),
                                java.time.Instant.now().minusSeconds(6600)),
                        null)));
        rows.add(
            measure(
                c, "one job by id (payload, errors)", (k, i) -> admin.jobView(k, someDead + i)));
        rows.add(
            measure(
                c,
                "queues (counts exact to 1,000, estimated past it; oldest, paused)",
                (k, i) -> admin.queueStats(k, List.of(), JobAdmin.COUNT_CAP)));
        rows.add(
            measure(
                c,
                "baseline: queues, live counts exact to 100,000 (before issue #27)",
                (k, i) -> admin.queueStats(k, List.of(), OLD_CAP)));
        rows.add(before47(c));
        rows.add(measure(c, "throughput (last hour per minute)", (k, i) -> admin.throughput(k)));
        rollUpADay(c);
        java.time.Instant now = java.time.Instant.now();
        rows.add(
            measure(
                c,
                "history, all queues, 7 days hourly",
                (k, i) ->
                    history.history(k, null, now.minus(java.time.Duration.ofDays(7)), now, 60)));
        rows.add(
            measure(
                c,
                "history, one queue, last hour per minute",
                (k, i) -> history.history(k, "q" + (i % QUEUES), now.minusSeconds(3600), now, 1)));
        rows.add(measure(c, "rollup of one minute (with its reset)", this::rollUpAMinute, 20));
        h.log("ADMIN the rollup statement alone: mean %.1f ms", rollupNs / 1e6 / (WARM_UP + 20));
        rows.add(measure(c, "fleet (listener backends)", (k, i) -> new FleetStore().listeners(k)));
        var engine = Engine.builder(EngineConfig.builder().build(), ds).maintenance(false).build();
        rows.add(measure(c, "leader", (k, i) -> engine.leaderHolder(k)));
        rows.add(
            measure(
                c,
                "replay one dead job by id",
                (k, i) ->
                    admin.jobAct(k, Action.REPLAY, JobFilter.byId(deadAt(k, i)), 1, "bench")));
        rows.add(
            measure(
                c,
                "retry now: bulk of 1000 in a queue",
                (k, i) ->
                    admin.jobAct(
                        k,
                        Action.RETRY,
                        JobFilter.all().withQueue("q" + (i % QUEUES)),
                        1000,
                        "bench"),
                20));
        var baselines = new ArrayList<Row>();
        Row staleNow = staleCounts(c, baselines);
        rows.addAll(baselines);
        rows.add(staleNow); // last: the target below reads it
      }
      h.server.dropDatabase(db.name());
    }
    var table = new ArrayList<List<String>>();
    for (Row r : rows) {
      table.add(List.of(r.name, f(r.p50), f(r.p95), f(r.max)));
      h.log("ADMIN %-50s p50 %6s ms  p95 %6s ms", r.name, f(r.p50), f(r.p95));
    }
    String size =
        String.format(Locale.ROOT, "%,d jobs", jobs)
            + (h.options.adminHistory() > 0
                ? String.format(
                    Locale.ROOT, " and %,d older finished jobs", h.options.adminHistory())
                : "");
    results.section(
        "ADMIN: admin API queries on " + size,
        Results.table(List.of("query", "p50 ms", "p95 ms", "max ms"), table)
            + "\n\n"
            + enqueueCost);
    double worst = rows.stream().filter(r -> !r.action()).mapToDouble(Row::p95).max().orElse(0);
    Row stale = rows.get(rows.size() - 1);
    results.target(
        "the queue list at " + size + ", a tenth of the live jobs changed since the last vacuum",
        "p95 < 100 ms",
        "p95 " + f(stale.p95()) + " ms",
        stale.p95() < 100,
        "index-only counts fetch the heap where the visibility map is not set");
    results.target(
        "admin read queries (every page of the console) at " + size,
        "every p95 < 100 ms",
        "worst p95 " + f(worst) + " ms",
        worst < 100,
        "the queue list reads at most 1,001 index entries per queue and state, none of a pair the"
            + " statistics put past 1,000");
  }

  /** The leader's first rollup after a day without one: every minute of the table's day. */
  private void rollUpADay(Connection c) throws SQLException {
    long t0 = System.nanoTime();
    try (Statement st = c.createStatement()) {
      st.execute(
          "UPDATE pgbus.queue_minute_mark"
              + " SET rolled_to = date_trunc('minute', now() - interval '25 hours')");
      st.execute("SELECT pgbus.queue_history_rollup(interval '15 seconds', interval '7 days')");
    }
    h.log("ADMIN rolled up a day of history in %.1f s", (System.nanoTime() - t0) / 1e9);
  }

  /** The steady state: the mark one minute back, that minute's rows gone, rolled up again. */
  private void rollUpAMinute(Connection c, int i) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(
          "UPDATE pgbus.queue_minute_mark"
              + " SET rolled_to = date_trunc('minute', now() - interval '75 seconds')");
      st.execute(
          "DELETE FROM pgbus.queue_minute"
              + " WHERE minute >= date_trunc('minute', now() - interval '75 seconds')");
    }
    long t = System.nanoTime();
    try (Statement st = c.createStatement()) {
      st.execute("SELECT pgbus.queue_history_rollup(interval '15 seconds', interval '7 days')");
    }
    rollupNs += System.nanoTime() - t;
  }

  private long deadAt(Connection c, int i) throws SQLException {
    return first(
        c, "SELECT id FROM pgbus.job WHERE state = 'dead' ORDER BY id LIMIT 1 OFFSET " + i);
  }

  private void page(Connection c, JobFilter f, Long before) throws SQLException {
    JobPage p = admin.jobSearch(c, f, before, 50);
    if (p.jobs().isEmpty()
        && before == null
        && f.payloadContains() == null
        && f.uniqueKey() == null) {
      throw new IllegalStateException("no jobs for " + f);
    }
  }

  private Row measure(Connection c, String name, Query q) throws SQLException {
    return measure(c, name, q, SAMPLES);
  }

  private Row measure(Connection c, String name, Query q, int samples) throws SQLException {
    for (int i = 0; i < WARM_UP; i++) {
      q.run(c, i);
    }
    long[] ns = new long[samples];
    for (int i = 0; i < samples; i++) {
      long t = System.nanoTime();
      q.run(c, WARM_UP + i);
      ns[i] = System.nanoTime() - t;
    }
    Arrays.sort(ns);
    return new Row(
        name,
        Stats.percentile(ns, 50) / 1e6,
        Stats.percentile(ns, 95) / 1e6,
        ns[samples - 1] / 1e6,
        name.startsWith("replay")
            || name.startsWith("retry")
            || name.startsWith("rollup")
            || name.startsWith("baseline")
            || name.startsWith(STALE));
  }

  private static final String STALE = "stale VM: ";

  // JobAdmin.COUNT_CAP before issue #27: with it the queue list counts every pair of this fill
  // (each under 100,000) as it did then, the baseline of the same run.
  private static final long OLD_CAP = 100_000;

  /**
   * The queue list as a busy live table has it between vacuums: every tenth live job updated
   * without a change (each write clears its page's all-visible bit, so the counts' index-only
   * ranges fetch the heap for those pages), no vacuum after. Last, since it leaves the table so.
   * Reported apart from the other reads: the bench VACUUMs the table before them.
   */
  private Row staleCounts(Connection c, List<Row> stale) throws SQLException {
    long changed;
    try (Statement st = c.createStatement()) {
      changed = st.executeUpdate("UPDATE pgbus.job SET priority = priority WHERE id % 10 = 3");
    }
    h.log("ADMIN changed %,d live jobs (no vacuum after)", changed);
    stale.add(
        measure(
            c,
            "baseline: " + STALE + "queues counted to 100,000 (before issue #27)",
            (k, i) -> admin.queueStats(k, List.of(), OLD_CAP),
            10));
    return measure(
        c,
        STALE + "queues, a tenth of the live jobs changed since the last vacuum",
        (k, i) -> admin.queueStats(k, List.of(), JobAdmin.COUNT_CAP),
        20);
  }

  /**
   * A million jobs as a busy system has them: ids in creation order over the last 24 hours, 8
   * queues, 70% completed, 10% dead, 5% cancelled, 8% available, 4% scheduled, 2% retryable, 1%
   * running; a unique key on every tenth. The completed and cancelled ones then move to
   * pgbus.job_history, a partition per UTC day, where the leader's archive (V33) has them a minute
   * after they end. Then ANALYZE and a VACUUM (the visibility map lets the counts use index-only
   * scans, as autovacuum would).
   */
  private static void fill(Connection c, int jobs) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(
          """
          INSERT INTO pgbus.job (queue, state, payload, attempt, max_attempts, run_at, created_at,
                                 finalized_at, unique_key, errors)
          SELECT 'q' || (i %% 8),
                 s.state::pgbus.job_state,
                 jsonb_build_object('order', i, 'customer', 'c' || (i %% 1000), 'note', 'some text'),
                 1, 1, t + CASE WHEN s.state = 'scheduled' THEN interval '2 days' ELSE interval '0' END,
                 t,
                 CASE WHEN s.state IN ('completed', 'dead', 'cancelled') THEN t + interval '2 seconds' END,
                 CASE WHEN i %% 10 = 0 THEN 'key-' || i END,
                 CASE WHEN s.state = 'dead' THEN '[{"attempt":1,"error":"boom"}]'::jsonb ELSE '[]' END
            FROM generate_series(1, %d) AS i,
                 LATERAL (SELECT now() - interval '24 hours' + (i::float8 / %d) * interval '24 hours' AS t) tt,
                 LATERAL (SELECT CASE WHEN i %% 100 < 70 THEN 'completed'
                                      WHEN i %% 100 < 80 THEN 'dead'
                                      WHEN i %% 100 < 85 THEN 'cancelled'
                                      WHEN i %% 100 < 93 THEN 'available'
                                      WHEN i %% 100 < 97 THEN 'scheduled'
                                      WHEN i %% 100 < 99 THEN 'retryable'
                                      ELSE 'running' END AS state) s
          """
              .formatted(jobs, jobs));
      st.execute(
          """
          DO $$
          DECLARE d date;
          BEGIN
            FOR d IN SELECT g::date FROM generate_series((now() AT TIME ZONE 'UTC')::date - 2,
                                                         (now() AT TIME ZONE 'UTC')::date + 1,
                                                         interval '1 day') g LOOP
              EXECUTE format('CREATE TABLE IF NOT EXISTS pgbus.%I PARTITION OF pgbus.job_history'
                             ' FOR VALUES FROM (%L) TO (%L)', 'job_history_p' || to_char(d, 'YYYYMMDD'),
                             d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
            END LOOP;
          END $$
          """);
      st.execute(
          """
          WITH moved AS (DELETE FROM pgbus.job WHERE state IN ('completed', 'cancelled') RETURNING *)
          INSERT INTO pgbus.job_history SELECT * FROM moved
          """);
      st.execute("VACUUM ANALYZE pgbus.job");
      st.execute("VACUUM ANALYZE pgbus.job_history");
    }
  }

  /**
   * The baseline in the same run: the queue list as before V47 (and right after the upgrade, until
   * the leader has counted each partition), the history's rows counted up to the cap. Marked an
   * action: not a page of this build's console, so not in the target.
   */
  private Row before47(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TEMP TABLE counted_keep AS SELECT * FROM pgbus.job_history_counted");
      st.execute("DELETE FROM pgbus.job_history_counted");
    }
    Row r =
        measure(
            c,
            "baseline: queues, history counted as before V47",
            (k, i) -> admin.queueStats(k, List.of(), OLD_CAP));
    try (Statement st = c.createStatement()) {
      st.execute("INSERT INTO pgbus.job_history_counted SELECT * FROM counted_keep");
      st.execute("DROP TABLE counted_keep");
    }
    return r;
  }

  /**
   * The leader's backfill after the upgrade to V47: each day partition of the history counted from
   * its rows (pgbus.job_history_recount, under a SHARE lock of that partition), as ArchiveStore
   * does for every partition not yet counted. The fill's own move was already counted by the
   * triggers; this is what a database of the previous release pays once.
   */
  private static String recountHistory(Connection c) throws SQLException {
    var perPartition = new ArrayList<String>();
    long rows = 0;
    double longest = 0;
    double total = 0;
    List<String> parts = new ArrayList<>();
    try (Statement st = c.createStatement();
        var rs =
            st.executeQuery(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                    + " WHERE i.inhparent = 'pgbus.job_history'::regclass"
                    + " AND c.relname ~ '^job_history_p[0-9]{8}$' ORDER BY 1")) {
      while (rs.next()) {
        parts.add(rs.getString(1));
      }
    }
    for (String part : parts) {
      long t = System.nanoTime();
      long n = first(c, "SELECT pgbus.job_history_recount('pgbus." + part + "')");
      double s = (System.nanoTime() - t) / 1e9;
      rows += n;
      total += s;
      longest = Math.max(longest, s);
      perPartition.add(String.format(Locale.ROOT, "%s %,d rows %.2f s", part, n, s));
    }
    return String.format(
        Locale.ROOT,
        "History counts backfill (V47, once after the upgrade): %,d rows in %d day partitions"
            + " counted in %.2f s, the longest partition %.2f s under its SHARE lock (%s).",
        rows,
        parts.size(),
        total,
        longest,
        String.join("; ", perPartition));
  }

  /**
   * What the count triggers (V47) cost the archive's move: batches of 1,000 completed jobs moved
   * from pgbus.job into pgbus.job_history (ArchiveStore's statement without its batch checks), with
   * the triggers and with them disabled, alternating, median of 5 rounds of 10 batches.
   */
  private static String moveCost(Connection c) throws SQLException {
    int batch = 1000;
    int batches = 10;
    double[] with = new double[5];
    double[] without = new double[5];
    for (int round = 0; round < 5; round++) {
      for (int k = 0; k < 2; k++) {
        boolean triggers = k == 0;
        try (Statement st = c.createStatement()) {
          st.execute(
              "INSERT INTO pgbus.job (queue, state, payload, attempt, run_at, created_at,"
                  + " attempted_at, finalized_at) SELECT 'movecost', 'completed', '{}', 1,"
                  + " now() - interval '5 minutes', now() - interval '5 minutes',"
                  + " now() - interval '5 minutes', now() - interval '4 minutes'"
                  + " FROM generate_series(1, "
                  + batch * batches
                  + ") g");
          st.execute(
              "ALTER TABLE pgbus.job_history "
                  + (triggers ? "ENABLE" : "DISABLE")
                  + " TRIGGER USER");
        }
        long t = System.nanoTime();
        try (var ps =
            c.prepareStatement(
                """
                WITH picked AS MATERIALIZED (
                  SELECT f.id FROM pgbus.job f
                   WHERE f.state = ANY ('{completed,cancelled}')
                     AND f.finalized_at >= now() - interval '1 day'
                     AND f.finalized_at < now() - interval '1 minute'
                   LIMIT ? FOR UPDATE SKIP LOCKED
                ), moved AS (
                  DELETE FROM pgbus.job j USING picked p WHERE j.id = p.id RETURNING j.*)
                INSERT INTO pgbus.job_history SELECT * FROM moved
                """)) {
          ps.setInt(1, batch);
          for (int b = 0; b < batches; b++) {
            ps.executeUpdate();
          }
        }
        double ms = (System.nanoTime() - t) / 1e6 / batches;
        (triggers ? with : without)[round] = ms;
      }
    }
    // Gone again, and the counts made whole again (the moves without triggers were not counted).
    try (Statement st = c.createStatement()) {
      st.execute("ALTER TABLE pgbus.job_history ENABLE TRIGGER USER");
      st.execute("DELETE FROM pgbus.job_history WHERE queue = 'movecost'");
      st.execute("VACUUM ANALYZE pgbus.job");
      st.execute("VACUUM ANALYZE pgbus.job_history");
      st.execute(
          "SELECT pgbus.job_history_recount(('pgbus.job_history_p'"
              + " || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD'))::regclass)");
    }
    return String.format(
        Locale.ROOT,
        "Cost of the count triggers (V47) on the archive's move: a batch of %,d jobs moved in"
            + " %.1f ms with them, %.1f ms without (%+.0f%%; median of 5 rounds of %d batches).",
        batch,
        Stats.median(with),
        Stats.median(without),
        (Stats.median(with) / Stats.median(without) - 1) * 100,
        batches);
  }

  /**
   * {@code n} more finished jobs straight into the history (issue #27's target at 10M history
   * rows), over the 7 days before the table's 24 hours, a day partition each, in the table's 8
   * queues (90% completed, 10% cancelled). One INSERT per day, oldest first, through
   * pgbus.job_history (the count triggers see them), before the table's fill: ids from pgbus.job's
   * sequence in time order, as the archive leaves them.
   */
  private static void fillHistory(Connection c, int n) throws SQLException {
    int perDay = n / 7;
    try (Statement st = c.createStatement()) {
      for (int d = 1; d <= 7; d++) {
        st.execute(
            """
            DO $$
            DECLARE day date := (now() AT TIME ZONE 'UTC')::date - %d;
            BEGIN
              EXECUTE format('CREATE TABLE IF NOT EXISTS pgbus.%%I PARTITION OF pgbus.job_history'
                             ' FOR VALUES FROM (%%L) TO (%%L)', 'job_history_p' || to_char(day, 'YYYYMMDD'),
                             day::timestamp AT TIME ZONE 'UTC', (day + 1)::timestamp AT TIME ZONE 'UTC');
            END $$
            """
                .formatted(d + 1));
      }
      for (int d = 7; d >= 1; d--) {
        st.execute(
            """
            INSERT INTO pgbus.job_history (id, queue, state, priority, payload, attempt, max_attempts,
                                           run_at, errors, created_at, attempted_at, finalized_at,
                                           linked, attempt_base, unique_key)
            SELECT nextval('pgbus.job_id_seq'), 'q' || (i %% 8),
                   CASE WHEN i %% 10 = 0 THEN 'cancelled' ELSE 'completed' END::pgbus.job_state, 0,
                   jsonb_build_object('order', i, 'customer', 'c' || (i %% 1000), 'note', 'some text'),
                   1, 1, t, '[]', t, t, t + interval '2 seconds', false, 0,
                   CASE WHEN i %% 10 = 0 THEN 'old-key-' || i END
              FROM generate_series(1, %d) AS i,
                   LATERAL (SELECT ((now() AT TIME ZONE 'UTC')::date - %d)::timestamp AT TIME ZONE 'UTC'
                                   + (i::float8 / %d) * interval '23 hours 59 minutes' AS t) tt
            """
                .formatted(perDay, d + 1, perDay));
      }
      st.execute("VACUUM ANALYZE pgbus.job_history");
    }
  }

  /**
   * Single-job enqueues (one transaction each, as W1's "single") with the V8 indexes and without:
   * what the indexes cost the hot path.
   */
  private String enqueueCost(Connection c) throws SQLException {
    var producer = new Jobs(EngineConfig.builder().workerId("bench-admin").build());
    int n = h.options.quick() ? 1_000 : 5_000;
    // Without waiting for the WAL flush: the commit's fsync would hide what the indexes cost.
    try (Statement st = c.createStatement()) {
      st.execute("SET synchronous_commit = off");
    }
    double[][] with = new double[2][3];
    double[][] without = new double[2][3];
    for (int round = 0; round < 3; round++) {
      double[] w = enqueueAndCompleteMs(c, producer, n);
      with[0][round] = w[0];
      with[1][round] = w[1];
      try (Statement st = c.createStatement()) {
        // Back to V7's indexes.
        st.execute(
            "DROP INDEX pgbus.job_queue_state_idx, pgbus.job_unique_key_idx,"
                + " pgbus.job_dead_payload_idx, pgbus.job_created_idx, pgbus.job_finalized_queue_idx");
        st.execute(
            "CREATE INDEX job_finalized_idx ON pgbus.job (state, finalized_at)"
                + " WHERE state IN ('completed', 'dead', 'cancelled')");
      }
      double[] wo = enqueueAndCompleteMs(c, producer, n);
      without[0][round] = wo[0];
      without[1][round] = wo[1];
      try (Statement st = c.createStatement()) {
        st.execute("DROP INDEX pgbus.job_finalized_idx");
        st.execute("CREATE INDEX job_queue_state_idx ON pgbus.job (queue, state, id)");
        st.execute(
            "CREATE INDEX job_dead_payload_idx ON pgbus.job USING gin (payload jsonb_path_ops)"
                + " WHERE state = 'dead'");
        st.execute("CREATE INDEX job_created_idx ON pgbus.job (created_at)");
        st.execute(
            "CREATE INDEX job_finalized_queue_idx ON pgbus.job (state, finalized_at) INCLUDE (queue)"
                + " WHERE state IN ('completed', 'dead', 'cancelled')");
        st.execute(
            "CREATE INDEX job_unique_key_idx ON pgbus.job (unique_key) WHERE unique_key IS NOT NULL");
      }
    }
    return String.format(
        Locale.ROOT,
        "Cost of the V8 indexes on the hot path: %,d jobs enqueued one per transaction, then"
            + " completed one per transaction (synchronous_commit off, so the WAL flush does not"
            + " hide it; from an empty table; median of 3 rounds): enqueue %.3f ms per job with"
            + " V8, %.3f ms with V7's indexes (%+.0f%%); complete %.3f ms with V8, %.3f ms with"
            + " V7's (%+.0f%%).",
        n,
        Stats.median(with[0]),
        Stats.median(without[0]),
        (Stats.median(with[0]) / Stats.median(without[0]) - 1) * 100,
        Stats.median(with[1]),
        Stats.median(without[1]),
        (Stats.median(with[1]) / Stats.median(without[1]) - 1) * 100);
  }

  /** Per job: enqueue one per transaction, then complete one per transaction; ms each. */
  private static double[] enqueueAndCompleteMs(Connection c, Jobs producer, int n)
      throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("TRUNCATE pgbus.job");
    }
    long[] ids = new long[n];
    long t = System.nanoTime();
    for (int i = 0; i < n; i++) {
      ids[i] = producer.enqueue(c, NewJob.of("q" + (i % QUEUES), "{\"n\": " + i + "}"));
    }
    double enqueue = (System.nanoTime() - t) / 1e6 / n;
    // The completion statement's index work (JobStore.COMPLETE without the claim's fence).
    t = System.nanoTime();
    try (var ps =
        c.prepareStatement(
            "UPDATE pgbus.job SET state = 'completed', finalized_at = now(),"
                + " lease_expires_at = NULL WHERE id = ?")) {
      for (long id : ids) {
        ps.setLong(1, id);
        ps.executeUpdate();
      }
    }
    double complete = (System.nanoTime() - t) / 1e6 / n;
    return new double[] {enqueue, complete};
  }

  private static long first(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        var rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String f(double ms) {
    return String.format(Locale.ROOT, "%.1f", ms);
  }
}

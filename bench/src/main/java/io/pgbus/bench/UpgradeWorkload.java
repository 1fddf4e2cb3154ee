package io.pgbus.bench;

import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.Schema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * Upgrade (issue #27): a database of the previous release (v0.1.0, schema V26) holding a week of
 * finished jobs and a backlog upgrades to this build while jobs keep flowing. The old schema is the
 * release's own migration files ({@code git archive} of its commit), so the database is what v0.1.0
 * left, functions included; this build's Flyway then validates V1-V26's checksums against its own
 * files (the migration fails on any difference). The load is v0.1.0's SQL (its JobStore's enqueue,
 * claim and completion statements, copied below), each statement timed; a sampler reads {@code
 * pg_locks} every 50 ms and keeps every ungranted lock with its wait ({@code waitstart}) and what
 * blocks it. The upgrade: this build's {@link Schema#migrate} (V27 onwards, as a deployment's first
 * JVM runs it), then this build's engine as the leader, moving the old finished rows into {@code
 * pgbus.job_history} in its bounded batches. Every load job must complete exactly once, and every
 * old row stay exactly once in {@code pgbus.job_all}.
 */
final class UpgradeWorkload {

  private static final String LIVE = "upgrade_live";
  private static final String BACKLOG = "upgrade_backlog";
  private static final String MIGRATIONS = "pgbus-impl/src/main/resources/io/pgbus/db/migration";

  // v0.1.0's JobStore.ENQUEUE (ce3cbf2), as its Java API ran it for one job.
  private static final String OLD_ENQUEUE =
      """
      SELECT e.id, e.duplicate
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p,
                     pg_catalog.set_config('pgbus.correlation_id',
                       coalesce(?::text, ?::bigint::text, ''),
                       true) AS c
              OFFSET 0) s,
             LATERAL pgbus.enqueue_job(s.queue, ?::jsonb, coalesce(?, now() + ?::float8 * interval '1 millisecond'), ?, ?, ?,
                             ?, ?, ?) e
      """;

  // v0.1.0's JobStore.CLAIM and COMPLETE.
  private static final String OLD_CLAIM =
      """
      SELECT id, queue, priority, payload::text, attempt, max_attempts, created_at, run_at,
             trace_parent, trace_state, lane
        FROM pgbus.claim(?::text[], ?, ?, ?::float8 * interval '1 millisecond', ?::integer,
                         ?::text[], ?::integer[], ?::text[]::timestamptz[])
      """;

  private static final String OLD_COMPLETE =
      """
      UPDATE pgbus.job
         SET state = 'completed', finalized_at = now(), lease_expires_at = NULL
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING linked
      """;

  // A week of finished jobs as v0.1.0 left them, all in pgbus.job: 90% completed, 5% cancelled,
  // 5% dead, finalized from 2 minutes to 7 days ago, in three queues; a chunk per statement.
  private static final String FILL_FINISHED =
      """
      INSERT INTO pgbus.job (queue, state, payload, attempt, max_attempts, run_at, created_at,
                             attempted_at, attempted_by, finalized_at, errors)
      SELECT 'upgrade_q' || (i % 3),
             (CASE i % 20 WHEN 0 THEN 'dead' WHEN 1 THEN 'cancelled' ELSE 'completed' END)::pgbus.job_state,
             jsonb_build_object('order', i, 'customer', 'c' || (i % 9973), 'note', repeat('x', 60)),
             CASE i % 20 WHEN 0 THEN 3 ELSE 1 END, 3, t - interval '2 seconds', t - interval '2 seconds',
             t - interval '1 second', 'old-worker', t,
             CASE i % 20 WHEN 0 THEN '[{"attempt": 3, "error": "boom"}]'::jsonb ELSE '[]'::jsonb END
        FROM generate_series(?::bigint, ?::bigint) AS i,
             LATERAL (SELECT now() - interval '2 minutes' - (i::float8 / ?) * interval '7 days' AS t) tt
      """;

  // The backlog: 90% available, 10% scheduled a day ahead, on a queue the load does not claim.
  private static final String FILL_WAITING =
      """
      INSERT INTO pgbus.job (queue, state, payload, run_at)
      SELECT ?, (CASE WHEN i % 10 = 0 THEN 'scheduled' ELSE 'available' END)::pgbus.job_state,
             jsonb_build_object('order', i, 'customer', 'c' || (i % 9973), 'note', repeat('x', 60)),
             CASE WHEN i % 10 = 0 THEN now() + interval '1 day' ELSE now() END
        FROM generate_series(1, ?) AS i
      """;

  // Every lock wait of this database now, with its start (PostgreSQL 14+) and its blockers.
  private static final String LOCK_WAITS =
      """
      SELECT l.pid, l.waitstart, extract(epoch FROM clock_timestamp() - l.waitstart) * 1000,
             a.application_name, l.locktype || coalesce(' ' || l.relation::regclass::text, ''),
             l.mode, left(a.query, 100),
             (SELECT string_agg(b.application_name || ': ' || left(b.query, 100), ' | ')
                FROM pg_stat_activity b WHERE b.pid = ANY (pg_blocking_pids(l.pid)))
        FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE NOT l.granted AND l.waitstart IS NOT NULL AND a.datname = current_database()
      """;

  private static final String OLD_FINISHED_LEFT =
      "SELECT count(*) FROM pgbus.job WHERE id <= ? AND state IN ('completed', 'cancelled')";

  private final Harness h;

  UpgradeWorkload(Harness h) {
    this.h = h;
  }

  /** A statement's latency: its start (epoch µs) and duration (µs). */
  private record Sample(String kind, long startMicros, long micros) {}

  /** One lock wait the sampler saw: the longest it was seen waiting. */
  private record Wait(
      int pid,
      long waitStartMicros,
      double ms,
      String waiter,
      String lock,
      String mode,
      String query,
      String blockers) {}

  /** A migration as Flyway recorded it. */
  private record Migration(String version, String description, long installedMicros, int ms) {}

  private final List<Sample> samples = java.util.Collections.synchronizedList(new ArrayList<>());
  private final ConcurrentHashMap<String, Wait> waits = new ConcurrentHashMap<>();
  private final Set<Long> enqueued = ConcurrentHashMap.newKeySet();
  private final ConcurrentHashMap<Long, Integer> completed = new ConcurrentHashMap<>();
  private final List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
  private final AtomicBoolean enqueueing = new AtomicBoolean(true);
  private final AtomicBoolean running = new AtomicBoolean(true);

  void run(Results results) throws Exception {
    int finished = h.options.upgradeFinished();
    int waiting = Math.max(1, finished / 10);
    int rate = h.options.upgradeRate();
    String ref = previousRelease();
    try (BenchDatabase db = h.server.createDatabase("upgrade")) {
      var pool = db.pool("upgrade-migrate", 4, 0);
      h.log(
          "UPGRADE: the schema of %s (its own migration files), then %,d finished and %,d waiting"
              + " jobs",
          ref, finished, waiting);
      installPrevious(pool, ref);
      long fillMs = fill(pool, finished, waiting);
      long maxOldId;
      long oldCompletedOrCancelled;
      try (Connection c = pool.getConnection();
          Statement st = c.createStatement()) {
        maxOldId = scalar(st, "SELECT max(id) FROM pgbus.job");
        oldCompletedOrCancelled =
            scalar(st, "SELECT count(*) FROM pgbus.job WHERE state IN ('completed', 'cancelled')");
        try {
          st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        } catch (SQLException e) {
          h.log(
              "UPGRADE: no pg_stat_statements (%s): batch durations from the rounds only",
              e.getMessage());
        }
      }
      long oldTop = scalar(pool, "SELECT max(installed_rank) FROM pgbus.schema_history");

      List<Thread> threads = new ArrayList<>();
      threads.add(thread("upgrade-sampler", () -> sample(db)));
      for (int w = 0; w < 2; w++) {
        int writer = w;
        threads.add(thread("upgrade-writer-" + w, () -> enqueue(db, writer, rate / 2.0)));
      }
      for (int w = 0; w < 3; w++) {
        int worker = w;
        threads.add(thread("upgrade-worker-" + w, () -> work(db, worker)));
      }
      h.log("UPGRADE: %d jobs/s of v0.1.0's SQL (2 writers, 3 workers); 15 s of baseline", rate);
      Sleep.millis(15_000);

      long migrateStart = micros();
      String version = Schema.migrate(pool);
      long migrateEnd = micros();
      h.log(
          "UPGRADE: migrated to %s in %.1f s; the leader moves the old rows",
          version, (migrateEnd - migrateStart) / 1e6);
      List<Migration> migrations = migrations(pool, oldTop);

      resetStatements(pool);
      long moveStart = micros();
      Engine leader =
          Engine.builder(
                  EngineConfig.builder()
                      .workerId("upgrade-leader")
                      // Every old row is younger than this: all of them move, none is pruned.
                      .completedRetention(Duration.ofDays(8))
                      .build(),
                  pool)
              .listenerConnections(() -> db.connect("upgrade-leader-listener"))
              .build();
      leader.start();
      long left;
      long deadline = System.nanoTime() + Duration.ofMinutes(60).toNanos();
      try (Connection c = db.connect("upgrade-progress");
          PreparedStatement ps = c.prepareStatement(OLD_FINISHED_LEFT)) {
        ps.setLong(1, maxOldId);
        do {
          Sleep.millis(2_000);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            left = rs.getLong(1);
          }
        } while (left > 0 && System.nanoTime() < deadline);
      }
      long moveEnd = micros();
      String batches = batches(pool);
      h.log(
          "UPGRADE: old finished rows moved in %.1f s (%d left); 5 s more load",
          (moveEnd - moveStart) / 1e6, left);
      Sleep.millis(5_000);
      enqueueing.set(false);
      long drainDeadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (!completed.keySet().containsAll(enqueued) && System.nanoTime() < drainDeadline) {
        Sleep.millis(100);
      }
      running.set(false);
      for (Thread t : threads) {
        t.join(30_000);
      }
      leader.stop();

      List<String> checks =
          checks(pool, maxOldId, finished + (long) waiting, oldCompletedOrCancelled);
      report(
          results,
          ref,
          version,
          finished,
          waiting,
          rate,
          fillMs,
          migrations,
          migrateStart,
          migrateEnd,
          moveStart,
          moveEnd,
          left,
          batches,
          checks);
    }
  }

  /** The release to upgrade from: the newest tag v*, else the pin in previous-release. */
  private String previousRelease() throws Exception {
    String tag = git("tag", "--list", "v*", "--sort=-v:refname").lines().findFirst().orElse("");
    if (!tag.isBlank()) {
      return tag.strip();
    }
    Path pins =
        Path.of(
            git("rev-parse", "--show-toplevel").strip(),
            "fleet/it/src/test/rolling/previous-release");
    return Files.readAllLines(pins).stream()
        .filter(l -> !l.startsWith("#") && l.split("\\s+").length == 2)
        .reduce((a, b) -> b)
        .map(l -> l.split("\\s+")[1])
        .orElseThrow(() -> new IllegalStateException("no previous release in " + pins));
  }

  /** The release's own migration files through Flyway, as its Schema.migrate ran them. */
  private void installPrevious(DataSource ds, String ref) throws Exception {
    Path dir = Path.of("target", "upgrade-previous", ref).toAbsolutePath();
    if (!Files.isDirectory(dir.resolve(MIGRATIONS))) {
      Files.createDirectories(dir);
      String root = git("rev-parse", "--show-toplevel").strip();
      var p =
          new ProcessBuilder(
                  "sh",
                  "-c",
                  "git -C \"$1\" archive \"$2\" \"$3\" | tar -x -C \"$4\"",
                  "sh",
                  root,
                  ref,
                  MIGRATIONS,
                  dir.toString())
              .inheritIO()
              .start();
      if (p.waitFor() != 0) {
        throw new IllegalStateException("git archive of " + ref + " failed");
      }
    }
    Flyway.configure(getClass().getClassLoader())
        .dataSource(ds)
        .schemas("pgbus")
        .createSchemas(true)
        .table("schema_history")
        .locations("filesystem:" + dir.resolve(MIGRATIONS))
        .load()
        .migrate();
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute("UPDATE pgbus.schema_compat SET newest_build = '0.1.0'");
    }
  }

  private long fill(DataSource ds, int finished, int waiting) throws SQLException {
    long t0 = System.nanoTime();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      int chunk = 100_000;
      try (PreparedStatement ps = c.prepareStatement(FILL_FINISHED)) {
        for (long from = 1; from <= finished; from += chunk) {
          ps.setLong(1, from);
          ps.setLong(2, Math.min(finished, from + chunk - 1));
          ps.setDouble(3, finished);
          ps.executeUpdate();
        }
      }
      try (PreparedStatement ps = c.prepareStatement(FILL_WAITING)) {
        ps.setString(1, BACKLOG);
        ps.setInt(2, waiting);
        ps.executeUpdate();
      }
      try (Statement st = c.createStatement()) {
        st.execute("VACUUM ANALYZE pgbus.job"); // what autovacuum would have done by then
      }
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    h.log("UPGRADE: filled in %.1f s", ms / 1e3);
    return ms;
  }

  private void enqueue(BenchDatabase db, int writer, double perSecond) {
    try (Connection c = db.connect("upgrade-old-writer-" + writer);
        PreparedStatement ps = c.prepareStatement(OLD_ENQUEUE)) {
      long interval = (long) (1e9 / perSecond);
      long next = System.nanoTime();
      long n = 0;
      while (enqueueing.get()) {
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Sleep.millis(Math.max(1, wait / 1_000_000));
          continue;
        }
        ps.setString(1, LIVE);
        ps.setNull(2, Types.VARCHAR);
        ps.setNull(3, Types.VARCHAR);
        ps.setNull(4, Types.BIGINT);
        ps.setString(5, "{\"writer\": " + writer + ", \"n\": " + n++ + "}");
        ps.setTimestamp(6, (Timestamp) null);
        ps.setLong(7, 0);
        ps.setInt(8, 0);
        ps.setInt(9, 25);
        ps.setNull(10, Types.VARCHAR);
        ps.setNull(11, Types.VARCHAR);
        ps.setNull(12, Types.VARCHAR);
        ps.setNull(13, Types.VARCHAR);
        long s = micros();
        long t = System.nanoTime();
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          enqueued.add(rs.getLong(1));
        } catch (SQLException e) {
          failed("enqueue", s, e); // the application's enqueue failed: counted, the load goes on
        }
        samples.add(new Sample("enqueue", s, (System.nanoTime() - t) / 1000));
        next += interval;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("writer " + writer + ": " + e.getMessage(), e);
    }
  }

  private void work(BenchDatabase db, int worker) {
    try (Connection c = db.connect("upgrade-old-worker-" + worker);
        PreparedStatement claim = c.prepareStatement(OLD_CLAIM);
        PreparedStatement complete = c.prepareStatement(OLD_COMPLETE)) {
      while (running.get()) {
        claim.setArray(1, c.createArrayOf("text", new String[] {LIVE}));
        claim.setInt(2, 20);
        claim.setString(3, "old-worker-" + worker);
        claim.setLong(4, 300_000);
        claim.setNull(5, Types.INTEGER);
        claim.setNull(6, Types.VARCHAR);
        claim.setNull(7, Types.VARCHAR);
        claim.setNull(8, Types.VARCHAR);
        var jobs = new ArrayList<long[]>();
        long s = micros();
        long t = System.nanoTime();
        try (ResultSet rs = claim.executeQuery()) {
          while (rs.next()) {
            jobs.add(new long[] {rs.getLong(1), rs.getInt(5)});
          }
        } catch (SQLException e) {
          failed("claim", s, e);
        }
        samples.add(new Sample("claim", s, (System.nanoTime() - t) / 1000));
        if (jobs.isEmpty()) {
          Sleep.millis(10); // v0.1.0 waits for a wake; a short poll keeps the rate without LISTEN
          continue;
        }
        for (long[] job : jobs) {
          complete.setLong(1, job[0]);
          complete.setInt(2, (int) job[1]);
          s = micros();
          t = System.nanoTime();
          try (ResultSet rs = complete.executeQuery()) {
            if (rs.next()) {
              completed.merge(job[0], 1, Integer::sum);
            }
          } catch (SQLException e) {
            failed("complete", s, e); // the lease expires and a claim takes the job again
          }
          samples.add(new Sample("complete", s, (System.nanoTime() - t) / 1000));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("worker " + worker + ": " + e.getMessage(), e);
    }
  }

  private void failed(String kind, long startMicros, SQLException e) {
    String m = kind + " at +" + (startMicros / 1000) % 1_000_000 + " ms: " + e.getMessage();
    errors.add(m.lines().limit(2).reduce((a, b) -> a + " " + b).orElse(m));
    h.log("UPGRADE: %s failed: %s", kind, e.getMessage().lines().findFirst().orElse(""));
  }

  private void sample(BenchDatabase db) {
    try (Connection c = db.connect("upgrade-sampler");
        PreparedStatement ps = c.prepareStatement(LOCK_WAITS)) {
      while (running.get()) {
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            var w =
                new Wait(
                    rs.getInt(1),
                    rs.getTimestamp(2).toInstant().toEpochMilli() * 1000,
                    rs.getDouble(3),
                    rs.getString(4),
                    rs.getString(5),
                    rs.getString(6),
                    rs.getString(7),
                    rs.getString(8));
            waits.merge(w.pid + "@" + w.waitStartMicros, w, (a, b) -> a.ms >= b.ms ? a : b);
          }
        }
        Sleep.millis(50);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("sampler: " + e.getMessage(), e);
    }
  }

  private static List<Migration> migrations(DataSource ds, long after) throws SQLException {
    var out = new ArrayList<Migration>();
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT coalesce(version, 'R'), description, installed_on, execution_time"
                    + " FROM pgbus.schema_history WHERE installed_rank > ? ORDER BY installed_rank")) {
      ps.setLong(1, after);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new Migration(
                  rs.getString(1),
                  rs.getString(2),
                  rs.getTimestamp(3).toInstant().toEpochMilli() * 1000,
                  rs.getInt(4)));
        }
      }
    }
    return out;
  }

  private static void resetStatements(DataSource ds) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute("SELECT pg_stat_statements_reset()");
    } catch (SQLException e) {
      // no pg_stat_statements: batches() says so
    }
  }

  /** The leader's move statements: how many, rows each, and their durations. */
  private static String batches(DataSource ds) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT sum(calls), sum(rows), max(max_exec_time),"
                    + " sum(total_exec_time) / nullif(sum(calls), 0)"
                    + " FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database"
                    + " WHERE datname = current_database())"
                    + " AND query LIKE '%INSERT INTO pgbus.job_history SELECT * FROM moved%'")) {
      rs.next();
      long calls = rs.getLong(1);
      return String.format(
          Locale.ROOT,
          "%,d move statements, %,.0f rows each on average, %.1f ms each on average, %.1f ms the"
              + " longest",
          calls,
          calls == 0 ? 0.0 : rs.getLong(2) / (double) calls,
          rs.getDouble(4),
          rs.getDouble(3));
    } catch (SQLException e) {
      return "n/a (pg_stat_statements: " + e.getMessage() + ")";
    }
  }

  private List<String> checks(DataSource ds, long maxOldId, long oldRows, long oldMoving)
      throws SQLException {
    var out = new ArrayList<String>();
    out.add(
        errors.isEmpty()
            ? "statements of the old release that failed: none"
            : "statements of the old release that FAILED: "
                + errors.size()
                + ", first: "
                + oneLine(errors.get(0)));
    var missing = new java.util.HashSet<>(enqueued);
    missing.removeAll(completed.keySet());
    long doubled = completed.values().stream().filter(n -> n > 1).count();
    out.add(
        String.format(
            Locale.ROOT,
            "load: %,d enqueued, %,d completed by the old workers, %d lost, %d completed twice",
            enqueued.size(),
            completed.size(),
            missing.size(),
            doubled));
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      long live =
          scalar(
              st,
              "SELECT count(*) FROM pgbus.job_all WHERE queue = '"
                  + LIVE
                  + "' AND state = 'completed'");
      long rows = scalar(st, "SELECT count(*) FROM pgbus.job_all WHERE id <= " + maxOldId);
      long ids = scalar(st, "SELECT count(DISTINCT id) FROM pgbus.job_all WHERE id <= " + maxOldId);
      long history = scalar(st, "SELECT count(*) FROM pgbus.job_history WHERE id <= " + maxOldId);
      long defaultPart = scalar(st, "SELECT count(*) FROM pgbus.job_history_default");
      out.add(
          String.format(
              Locale.ROOT,
              "database: %,d load jobs completed (job_all); old rows %,d of %,d, %,d distinct ids;"
                  + " %,d of %,d completed/cancelled in job_history, %,d in its default partition",
              live,
              rows,
              oldRows,
              ids,
              history,
              oldMoving,
              defaultPart));
      boolean ok =
          errors.isEmpty()
              && missing.isEmpty()
              && doubled == 0
              && live == enqueued.size()
              && rows == oldRows
              && ids == oldRows
              && history == oldMoving
              && defaultPart == 0;
      out.add(ok ? "exactly once: yes" : "exactly once: NO");
    }
    return out;
  }

  private void report(
      Results results,
      String ref,
      String version,
      int finished,
      int waiting,
      int rate,
      long fillMs,
      List<Migration> migrations,
      long migrateStart,
      long migrateEnd,
      long moveStart,
      long moveEnd,
      long left,
      String batches,
      List<String> checks) {
    var md = new StringBuilder();
    md.append(
        String.format(
            Locale.ROOT,
            "From %s (schema V26, its own migration files) to this build (%s): %,d finished jobs"
                + " over 7 days (90%% completed, 5%% cancelled, 5%% dead) and %,d waiting, all in"
                + " pgbus.job, filled in %.1f s; %d jobs/s of v0.1.0's enqueue, claim and complete"
                + " statements (2 writers, 3 workers polling every 10 ms) from 15 s before the"
                + " migration to 5 s after the last old row moved; pg_locks sampled every 50 ms.%n%n",
            ref,
            version,
            finished,
            waiting,
            fillMs / 1e3,
            rate));
    var rows = new ArrayList<List<String>>();
    for (Migration m : migrations) {
      rows.add(List.of(m.version, m.description, Stats.f("%,.0f", m.ms)));
    }
    md.append(Results.table(List.of("migration", "what", "ms (Flyway)"), rows)).append('\n');
    md.append(
        String.format(
            Locale.ROOT,
            "Schema.migrate: %.1f s in all. Old finished rows moved by the leader in %.1f s from its"
                + " start (%,d left); %s.%n%n",
            (migrateEnd - migrateStart) / 1e6,
            (moveEnd - moveStart) / 1e6,
            left,
            batches));
    var phases = new ArrayList<List<String>>();
    long[][] windows = {
      {0, migrateStart},
      {migrateStart, migrateEnd},
      {migrateEnd, moveEnd},
      {moveEnd, Long.MAX_VALUE}
    };
    String[] names = {
      "before (baseline)", "during the migration", "while the old rows move", "after"
    };
    List<Sample> all;
    synchronized (samples) {
      all = new ArrayList<>(samples);
    }
    for (String kind : List.of("enqueue", "claim", "complete")) {
      for (int p = 0; p < windows.length; p++) {
        long from = windows[p][0];
        long to = windows[p][1];
        long[] v =
            all.stream()
                .filter(s -> s.kind.equals(kind) && s.startMicros >= from && s.startMicros < to)
                .mapToLong(Sample::micros)
                .sorted()
                .toArray();
        phases.add(
            List.of(
                kind,
                names[p],
                Stats.f("%,.0f", v.length),
                Stats.f("%.1f", Stats.percentile(v, 50) / 1000),
                Stats.f("%.1f", Stats.percentile(v, 99) / 1000),
                Stats.f("%.1f", v.length == 0 ? Double.NaN : v[v.length - 1] / 1000.0)));
      }
    }
    md.append(
            Results.table(
                List.of("statement", "phase", "count", "p50 ms", "p99 ms", "max ms"), phases))
        .append('\n');
    var longest =
        waits.values().stream().sorted((a, b) -> Double.compare(b.ms, a.ms)).limit(8).toList();
    var waitRows = new ArrayList<List<String>>();
    for (Wait w : longest) {
      waitRows.add(
          List.of(
              Stats.f("%.0f", w.ms),
              w.waiter,
              w.lock + " " + w.mode,
              oneLine(w.query),
              oneLine(w.blockers == null ? "" : w.blockers)));
    }
    var client =
        waits.values().stream()
            .filter(w -> w.waiter.startsWith("upgrade-old"))
            .max((a, b) -> Double.compare(a.ms, b.ms));
    md.append(
        String.format(
            Locale.ROOT,
            "Lock waits seen: %d in all, %d of them the old writers' and workers'; the longest of"
                + " theirs %s. The longest of all:%n%n",
            waits.size(),
            waits.values().stream().filter(w -> w.waiter.startsWith("upgrade-old")).count(),
            client
                .map(
                    w ->
                        String.format(
                            Locale.ROOT,
                            "%.0f ms (%s on %s, behind: %s)",
                            w.ms,
                            w.waiter,
                            w.lock,
                            oneLine(w.blockers == null ? "?" : w.blockers)))
                .orElse("none")));
    md.append(
            Results.table(
                List.of("waited ms (at least)", "who", "lock", "statement", "blocked by"),
                waitRows))
        .append('\n');
    checks.forEach(c -> md.append("- ").append(c).append('\n'));
    results.section("Upgrade: " + ref + " with a week of jobs, under load", md.toString());
    h.log("UPGRADE: %s", String.join("; ", checks));
  }

  private static String oneLine(String s) {
    return s.replaceAll("\\s+", " ").replace("|", "\\|").strip();
  }

  private static long micros() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
  }

  private static long scalar(Statement st, String sql) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long scalar(DataSource ds, String sql) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      return scalar(st, sql);
    }
  }

  private static String git(String... args) throws Exception {
    var cmd = new ArrayList<String>();
    cmd.add("git");
    cmd.addAll(List.of(args));
    var p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + ": " + out);
    }
    return out;
  }

  private static Thread thread(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
  }
}

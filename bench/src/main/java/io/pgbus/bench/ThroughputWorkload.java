package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W1: batch-enqueue N no-op jobs with no consumer running, then start the consumers and time until
 * every job is done; then enqueue jobs one transaction each. Alongside the rates it keeps what
 * explains them: statements, transactions and WAL flushes per job, and CPU per job on each side of
 * the connection.
 */
final class ThroughputWorkload {

  static final String QUEUE = "bench";

  /**
   * db-scheduler's lock-and-fetch fractions of its thread count: fetch again when fewer than half
   * the threads have work queued, up to one execution per thread per fetch.
   */
  static final double DB_SCHEDULER_LOWER = 0.5;

  static final double DB_SCHEDULER_UPPER = 1.0;

  /** One system in one run. */
  record Run(
      double enqueuePerSec,
      double processPerSec,
      double singlePerSec,
      Map<StatementKind, Long> statements,
      Map<String, double[]> queries,
      long xacts,
      long walSyncs,
      CpuMeter.Usage cpu,
      Map<String, Long> counters,
      double singleServerMs) {}

  private final Harness h;

  ThroughputWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    h.systems.forEach(s -> runs.put(s.name(), new ArrayList<>()));
    // A reference, not a target: the raw queue acknowledging every job in its own transaction
    // (LIMIT 1, one DELETE per job), which is what pgbus's per-job completion transaction does.
    boolean reference = o.rawBatch() != 1;
    double[] perJobAck = new double[reference ? o.runs() : 0];
    List<Run> batched = new ArrayList<>();
    List<Run> batchedDeleting = new ArrayList<>();
    List<Run> dbScheduler = new ArrayList<>();
    List<Run> limited = new ArrayList<>();
    List<Run> keyed = new ArrayList<>();
    for (int r = 0; r < o.runs(); r++) {
      // db-scheduler goes first in odd runs and last in even ones, so drift hits it as the others.
      if (r % 2 == 1) {
        dbScheduler.add(dbSchedulerOnce(r));
      }
      for (QueueSystem s : h.order(r)) {
        Run run = once(s, "w1_" + s.name() + (r + 1), o.w1Jobs(), o.singleJobs());
        runs.get(s.name()).add(run);
        h.log(
            "W1 run %d %-5s enqueue %s jobs/s, process %s jobs/s, single %s jobs/s",
            r + 1,
            s.name(),
            Stats.rate(run.enqueuePerSec),
            Stats.rate(run.processPerSec),
            Stats.rate(run.singlePerSec));
      }
      // Flow control (issue #16): a global limit equal to the slots, which never binds but makes
      // every claim take the queue's limit row and count its running jobs; then 1,000 keys of
      // limit 1 dealt round-robin.
      Run lim =
          once(
              new PgbusSystem(io.pgbus.engine.CapsuleConfig.AUTO, false, o.workers(), 0),
              "w1_pgbuslim_" + (r + 1),
              o.w1Jobs(),
              1);
      limited.add(lim);
      h.log(
          "W1 run %d pgbus, global limit %d: process %s jobs/s",
          r + 1, o.workers(), Stats.rate(lim.processPerSec));
      Run key =
          once(
              new PgbusSystem(io.pgbus.engine.CapsuleConfig.AUTO, false, 0, 1000),
              "w1_pgbuskey_" + (r + 1),
              o.w1Jobs(),
              1);
      keyed.add(key);
      h.log(
          "W1 run %d pgbus, 1,000 keys of limit 1: process %s jobs/s",
          r + 1, Stats.rate(key.processPerSec));
      if (o.jobsPerTransaction() > 0) {
        for (boolean delete : new boolean[] {false, true}) {
          Run run =
              once(
                  new PgbusSystem(o.jobsPerTransaction(), delete),
                  "w1_pgbustx" + (delete ? "d_" : "_") + (r + 1),
                  o.w1Jobs(),
                  1);
          (delete ? batchedDeleting : batched).add(run);
          h.log(
              "W1 run %d pgbus, %d jobs per transaction%s: process %s jobs/s",
              r + 1,
              o.jobsPerTransaction(),
              delete ? ", retention.completed=0" : "",
              Stats.rate(run.processPerSec));
        }
      }
      if (r % 2 == 0) {
        dbScheduler.add(dbSchedulerOnce(r));
      }
      if (reference) {
        Run run = once(new RawSystem(1), "w1_rawk1_" + (r + 1), o.w1Jobs(), 1);
        perJobAck[r] = run.processPerSec;
        h.log(
            "W1 run %d raw, LIMIT 1 (reference): process %s jobs/s",
            r + 1, Stats.rate(run.processPerSec));
      }
    }
    report(
        results,
        runs.get("pgbus"),
        runs.get("raw"),
        batched,
        batchedDeleting,
        dbScheduler,
        perJobAck);
    double[] pp = runs.get("pgbus").stream().mapToDouble(Run::processPerSec).toArray();
    double[] lp = limited.stream().mapToDouble(Run::processPerSec).toArray();
    double[] kp = keyed.stream().mapToDouble(Run::processPerSec).toArray();
    results.section(
        "W1 with flow control",
        Results.table(
            List.of("W1 processing (" + pp.length + " runs)", "jobs/s", "/ unlimited pgbus"),
            List.of(
                List.of("pgbus, unlimited", Stats.spreadRate(pp), "1"),
                List.of(
                    "pgbus, global-concurrency = " + o.workers() + " (the slots)",
                    Stats.spreadRate(lp),
                    Stats.spread(ratios(lp, pp), "%.2f")),
                List.of(
                    "pgbus, 1,000 concurrency keys, limit 1",
                    Stats.spreadRate(kp),
                    Stats.spread(ratios(kp, pp), "%.2f")))));
  }

  private Run dbSchedulerOnce(int r) throws Exception {
    Run run =
        once(
            new DbSchedulerSystem(DB_SCHEDULER_LOWER, DB_SCHEDULER_UPPER),
            "w1_dbscheduler_" + (r + 1),
            h.options.w1Jobs(),
            h.options.singleJobs());
    h.log(
        "W1 run %d db-scheduler (lock-and-fetch, 100 ms poll, %d threads): process %s jobs/s",
        r + 1, h.options.workers(), Stats.rate(run.processPerSec));
    return run;
  }

  /**
   * A small unmeasured W1 on each system, so the JIT has compiled the engine, pgjdbc and the pool
   * before anything is timed: otherwise the first system measured pays for the compilation.
   */
  void warmUp() throws Exception {
    for (QueueSystem s : h.systems) {
      once(s, "warmup_" + s.name(), 4_000, 300);
    }
    once(
        new DbSchedulerSystem(DB_SCHEDULER_LOWER, DB_SCHEDULER_UPPER),
        "warmup_dbscheduler",
        4_000,
        300);
  }

  private Run once(QueueSystem system, String label, int jobs, int singles) throws Exception {
    BenchOptions o = h.options;
    try (BenchDatabase db = h.server.createDatabase(label)) {
      h.install(system, db);
      HikariDataSource pool = db.pool(system.name() + "-pool", Harness.POOL, Harness.POOL);

      long t0 = System.nanoTime();
      int left = jobs;
      try (Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        while (left > 0) {
          int n = Math.min(left, o.w1Batch());
          system.enqueueBatch(c, QUEUE, n);
          c.commit();
          left -= n;
        }
        c.setAutoCommit(true);
      }
      double enqueue = jobs / ((System.nanoTime() - t0) / 1e9);

      var tracker = new JobTracker();
      ServerStats.Snapshot before = h.stats.snapshot(db.name());
      CpuMeter.Sample cpu0 = h.cpu.sample();
      long t1 = System.nanoTime();
      Map<String, Long> counters;
      try (QueueSystem.Consumers consumers =
          system.start(db, pool, List.of(QUEUE), o.workers(), tracker)) {
        if (!tracker.awaitFinished(jobs, Duration.ofMinutes(5))) {
          throw new IllegalStateException(
              system.name() + " finished only " + tracker.finished() + " of " + jobs + " jobs");
        }
        counters = consumers.counters();
      }
      double process = jobs / ((tracker.lastFinishedNanos() - t1) / 1e9);
      CpuMeter.Usage cpu = h.cpu.sample().since(cpu0);
      ServerStats.Snapshot after = ServerStats.settled(h.stats, db, pool);

      ServerStats.Snapshot beforeSingle = h.stats.snapshot(db.name());
      long t2 = System.nanoTime();
      try (Connection c = db.pool(system.name() + "-single", 1, 1).getConnection()) {
        c.setAutoCommit(false);
        for (int i = 0; i < singles; i++) {
          system.enqueueOne(c, QUEUE);
          c.commit();
        }
        c.setAutoCommit(true);
      }
      double single = singles / ((System.nanoTime() - t2) / 1e9);
      double[] enqueueTime = {0, 0};
      h.stats
          .snapshot(db.name())
          .queriesSince(beforeSingle)
          .forEach(
              (q, v) -> {
                if (StatementKind.of(q) == StatementKind.ENQUEUE) {
                  enqueueTime[0] += v[0];
                  enqueueTime[1] += v[1];
                }
              });
      return new Run(
          enqueue,
          process,
          single,
          after.callsSince(before),
          after.queriesSince(before),
          after.xactCommit() - before.xactCommit(),
          after.walSyncs() - before.walSyncs(),
          cpu,
          counters,
          enqueueTime[0] == 0 ? Double.NaN : enqueueTime[1] / enqueueTime[0]);
    }
  }

  private void report(
      Results results,
      List<Run> pgbus,
      List<Run> raw,
      List<Run> batched,
      List<Run> batchedDeleting,
      List<Run> dbScheduler,
      double[] perJobAck) {
    int n = pgbus.size();
    double[] pe = pgbus.stream().mapToDouble(Run::enqueuePerSec).toArray();
    double[] pp = pgbus.stream().mapToDouble(Run::processPerSec).toArray();
    double[] ps = pgbus.stream().mapToDouble(Run::singlePerSec).toArray();
    double[] re = raw.stream().mapToDouble(Run::enqueuePerSec).toArray();
    double[] rp = raw.stream().mapToDouble(Run::processPerSec).toArray();
    double[] rs = raw.stream().mapToDouble(Run::singlePerSec).toArray();
    double[] ratioE = ratios(pe, re);
    double[] ratioP = ratios(pp, rp);
    double[] ratioS = ratios(ps, rs);
    BenchOptions o = h.options;
    String table =
        Results.table(
            List.of("W1 (" + n + " runs)", "pgbus", "raw", "pgbus / raw"),
            List.of(
                List.of(
                    "batch enqueue, jobs/s (" + o.w1Batch() + " per statement)",
                    Stats.spreadRate(pe),
                    Stats.spreadRate(re),
                    Stats.spread(ratioE, "%.2f")),
                List.of(
                    "processing, jobs/s (" + o.workers() + " slots)",
                    Stats.spreadRate(pp),
                    Stats.spreadRate(rp),
                    Stats.spread(ratioP, "%.2f")),
                List.of(
                    "single-job enqueue, jobs/s (1 transaction each)",
                    Stats.spreadRate(ps),
                    Stats.spreadRate(rs),
                    Stats.spread(ratioS, "%.2f"))));
    double[] ratioK1 = perJobAck.length == 0 ? new double[0] : ratios(pp, perJobAck);
    if (perJobAck.length > 0) {
      table +=
          "| *reference:* processing, raw with LIMIT 1 and one DELETE per job, jobs/s | "
              + Stats.spreadRate(pp)
              + " | "
              + Stats.spreadRate(perJobAck)
              + " | "
              + Stats.spread(ratioK1, "%.2f")
              + " |\n";
    }
    double[] pb = batched.stream().mapToDouble(Run::processPerSec).toArray();
    double[] pd = batchedDeleting.stream().mapToDouble(Run::processPerSec).toArray();
    double[] ratioB = ratios(pb, rp);
    double[] ratioD = ratios(pd, rp);
    if (pb.length > 0) {
      table +=
          "| processing, pgbus with jobs-per-transaction="
              + o.jobsPerTransaction()
              + ", jobs/s | "
              + Stats.spreadRate(pb)
              + " | "
              + Stats.spreadRate(rp)
              + " | "
              + Stats.spread(ratioB, "%.2f")
              + " |\n"
              + "| processing, pgbus with jobs-per-transaction="
              + o.jobsPerTransaction()
              + " and retention.completed=0, jobs/s | "
              + Stats.spreadRate(pd)
              + " | "
              + Stats.spreadRate(rp)
              + " | "
              + Stats.spread(ratioD, "%.2f")
              + " |\n";
    }
    double[] dp = dbScheduler.stream().mapToDouble(Run::processPerSec).toArray();
    double[] ratioDs = ratios(pp, dp);
    table +=
        "| processing, db-scheduler "
            + DbSchedulerSystem.VERSION
            + " (lock-and-fetch "
            + DB_SCHEDULER_LOWER
            + "/"
            + DB_SCHEDULER_UPPER
            + ", 100 ms poll, "
            + o.workers()
            + " threads), jobs/s | "
            + Stats.spreadRate(pp)
            + " | "
            + Stats.spreadRate(dp)
            + " (db-scheduler) | "
            + Stats.spread(ratioDs, "%.2f")
            + " (pgbus / db-scheduler) |\n";
    var firstRuns = new LinkedHashMap<String, Run>();
    firstRuns.put("pgbus", pgbus.get(0));
    if (!batched.isEmpty()) {
      firstRuns.put("pgbus×" + o.jobsPerTransaction(), batched.get(0));
      firstRuns.put("pgbus×" + o.jobsPerTransaction() + " del", batchedDeleting.get(0));
    }
    firstRuns.put("raw", raw.get(0));
    firstRuns.put("db-scheduler", dbScheduler.get(0));
    String evidence = evidence(firstRuns);
    results.section(
        "W1 throughput",
        "Batch-enqueue "
            + String.format("%,d", o.w1Jobs())
            + " no-op jobs with no consumer running, then start the consumers and time until"
            + " the last job is done; then "
            + String.format("%,d", o.singleJobs())
            + " single-job enqueues. Median [min–max] over runs; the ratio is taken per run"
            + " (both systems ran back to back in the same run), then its median.\n\n"
            + table
            + "\n"
            + evidence);
    double ratio = Stats.median(ratioP);
    results.target(
        "W1 processing",
        "≥ 0.8× raw",
        Stats.f("%.2f×", ratio)
            + " ("
            + Stats.spreadRate(pp)
            + " vs "
            + Stats.spreadRate(rp)
            + " jobs/s)",
        ratio >= 0.8,
        "raw claims "
            + o.rawBatch()
            + " per statement and deletes each batch in one statement"
            + (perJobAck.length == 0
                ? ""
                : Stats.f("; against raw with one DELETE per job: %.2f×", Stats.median(ratioK1))));
    double ds = Stats.median(ratioDs);
    results.target(
        "W1 processing, default settings, against db-scheduler",
        "≥ 3× db-scheduler",
        Stats.f("%.2f×", ds)
            + " ("
            + Stats.spreadRate(pp)
            + " vs "
            + Stats.spreadRate(dp)
            + " jobs/s)",
        ds >= 3,
        "db-scheduler "
            + DbSchedulerSystem.VERSION
            + " with lock-and-fetch, 100 ms poll, "
            + o.workers()
            + " threads, in the same run");
    if (pb.length > 0) {
      double r = Stats.median(ratioB);
      results.target(
          "W1 processing, jobs-per-transaction=" + o.jobsPerTransaction(),
          "≥ 0.8× raw",
          Stats.f("%.2f×", r)
              + " ("
              + Stats.spreadRate(pb)
              + " vs "
              + Stats.spreadRate(rp)
              + " jobs/s)",
          r >= 0.8,
          "the capsule runs up to "
              + o.jobsPerTransaction()
              + " jobs in one transaction and completes them in one statement");
      double d = Stats.median(ratioD);
      results.target(
          "W1 processing, jobs-per-transaction="
              + o.jobsPerTransaction()
              + ", retention.completed=0",
          "≥ 0.8× raw",
          Stats.f("%.2f×", d)
              + " ("
              + Stats.spreadRate(pd)
              + " vs "
              + Stats.spreadRate(rp)
              + " jobs/s)",
          d >= 0.8,
          "as above, and completing a job deletes it, as the raw queue does");
    }
  }

  private static double[] ratios(double[] a, double[] b) {
    double[] r = new double[a.length];
    for (int i = 0; i < a.length; i++) {
      r[i] = a[i] / b[i];
    }
    return r;
  }

  /** Per-job costs during processing, from the first run of each system (one column each). */
  private String evidence(Map<String, Run> firstRuns) {
    double jobs = h.options.w1Jobs();
    List<Run> runs = List.copyOf(firstRuns.values());
    var rows = new ArrayList<List<String>>();
    var kinds = new java.util.TreeSet<StatementKind>();
    runs.forEach(r -> kinds.addAll(r.statements.keySet()));
    for (StatementKind k : kinds) {
      if (runs.stream().allMatch(r -> r.statements.getOrDefault(k, 0L) < jobs / 1000)) {
        continue; // below 0.001 per job everywhere: start-up and maintenance noise
      }
      rows.add(
          row(
              "statements/job: " + k.label,
              runs,
              r -> Stats.f("%.3f", r.statements.getOrDefault(k, 0L) / jobs)));
    }
    if (h.server.statements()) {
      rows.add(
          row(
              "**statements/job, without BEGIN/COMMIT**",
              runs,
              r -> Stats.f("%.3f", work(r.statements) / jobs)));
    }
    rows.add(row("committed transactions/job", runs, r -> Stats.f("%.3f", r.xacts / jobs)));
    rows.add(
        row(
            "WAL flushes (pg_stat_wal.wal_sync)/job",
            runs,
            r -> Stats.f("%.3f", r.walSyncs / jobs)));
    rows.add(
        row(
            "jobs per claim statement",
            runs,
            r ->
                r.counters.containsKey("claims")
                    ? Stats.f(
                        "%.2f",
                        r.counters.get("claimed") / (double) Math.max(1, r.counters.get("claims")))
                    : "n/a"));
    rows.add(
        row(
            "empty claims",
            runs,
            r ->
                r.counters.containsKey("empty claims")
                    ? r.counters.get("empty claims") + ""
                    : "n/a"));
    rows.add(row("JVM CPU µs/job (of which kernel)", runs, r -> jvmCpu(r.cpu, jobs)));
    rows.add(
        row(
            "PostgreSQL CPU µs/job",
            runs,
            r ->
                r.cpu.serverNanos() < 0
                    ? "n/a"
                    : Stats.f("%.0f", r.cpu.serverNanos() / jobs / 1e3)));
    rows.add(row("cores busy: JVM / PostgreSQL / everything else", runs, r -> cores(r.cpu)));
    rows.add(
        row(
            "single-job enqueue: server time per enqueue statement, ms",
            runs,
            r -> Stats.f("%.3f", r.singleServerMs)));
    var top = new StringBuilder();
    firstRuns.forEach((name, r) -> top.append(topQueries(name, r.queries, jobs)));
    var header = new ArrayList<String>();
    header.add("evidence");
    header.addAll(firstRuns.keySet());
    return "Per-job costs while processing (run 1). Statements are top-level ones from"
        + " pg_stat_statements; it shows pgjdbc's BEGIN (sent in the same round trip as the"
        + " statement after it) but hardly any COMMIT, so transactions come from"
        + " pg_stat_database.xact_commit. WAL flushes are cluster-wide (pg_stat_wal).\n\n"
        + Results.table(header, rows)
        + "\nBusiest statements while processing, run 1 (calls per job, mean execution time in the"
        + " server):\n\n```\n"
        + top
        + "```\n";
  }

  private static List<String> row(
      String label, List<Run> runs, java.util.function.Function<Run, String> cell) {
    var row = new ArrayList<String>();
    row.add(label);
    runs.forEach(r -> row.add(cell.apply(r)));
    return row;
  }

  private static String topQueries(String system, Map<String, double[]> queries, double jobs) {
    var out = new StringBuilder();
    int i = 0;
    for (Map.Entry<String, double[]> e : queries.entrySet()) {
      if (i++ == 6) {
        break;
      }
      String q = e.getKey().replaceAll("\\s+", " ").trim();
      out.append(
          String.format(
              java.util.Locale.ROOT,
              "%-12s %6.3f/job %8.3f ms  %s%n",
              system,
              e.getValue()[0] / jobs,
              e.getValue()[1] / e.getValue()[0],
              q.length() > 110 ? q.substring(0, 110) + "..." : q));
    }
    return out.toString();
  }

  private static String jvmCpu(CpuMeter.Usage u, double jobs) {
    return Stats.f("%.0f", u.jvmNanos() / jobs / 1e3)
        + (u.jvmSystemNanos() < 0 ? "" : Stats.f(" (%.0f)", u.jvmSystemNanos() / jobs / 1e3));
  }

  /** Statements that do work: all but BEGIN and COMMIT. */
  static long work(Map<StatementKind, Long> calls) {
    return calls.entrySet().stream()
        .filter(e -> !e.getKey().transactionControl())
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  static String cores(CpuMeter.Usage u) {
    return Stats.f("%.2f", u.jvm())
        + " / "
        + (u.server() < 0 ? "n/a" : Stats.f("%.2f", u.server()))
        + " / "
        + (u.others() < 0 ? "n/a" : Stats.f("%.2f", u.others()));
  }
}

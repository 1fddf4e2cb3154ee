package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * W2: wake latency at idle. With the consumers idle and their listener delivering, a producer on
 * its own connection (as another JVM would) commits one job every interval; the latency of a job is
 * from its commit returning to its handler starting.
 */
final class WakeLatencyWorkload {

  /**
   * Latency figures of one run, in milliseconds. The split at the claim (when the database began
   * the claim statement, by its {@code now()}) is NaN for raw, which keeps no such time; W5 uses
   * it, and the CPU use, to set pgbus in Java SE beside pgbus in Liberty.
   */
  record Run(
      double p50,
      double p95,
      double p99,
      double max,
      int jobs,
      double toWakeP50,
      double toStartP50,
      double toClaimP50,
      double toClaimP99,
      double claimToStartP50,
      double claimToStartP99,
      CpuMeter.Usage cpu) {}

  private final Harness h;
  private final List<Run> pgbusRuns = new ArrayList<>();

  WakeLatencyWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    Map<String, List<Run>> runs =
        h.eachRun(
            (s, r) -> {
              Run run = once(s, r);
              h.log(
                  "W2 run %d %-5s p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms",
                  r, s.name(), run.p50, run.p95, run.p99, run.max);
              return run;
            });
    pgbusRuns.addAll(runs.get("pgbus"));
    report(results, runs.get("pgbus"), runs.get("raw"));
  }

  /** pgbus's runs, once {@link #run} has returned: W5's Java SE reference. */
  List<Run> pgbusRuns() {
    return pgbusRuns;
  }

  private Run once(QueueSystem system, int run) throws Exception {
    BenchOptions o = h.options;
    try (BenchDatabase db = h.server.createDatabase("w2_" + system.name() + run)) {
      h.install(system, db);
      HikariDataSource pool = db.pool(system.name() + "-pool", Harness.POOL, Harness.POOL);
      var tracker = new JobTracker();
      long[][] byClaim;
      CpuMeter.Sample cpu0;
      CpuMeter.Usage cpu;
      try (QueueSystem.Consumers consumers =
              system.start(db, pool, List.of(ThroughputWorkload.QUEUE), o.workers(), tracker);
          Connection producer = db.connect("bench-producer")) {
        consumers.awaitReady(Duration.ofSeconds(30));
        Sleep.millis(1_000); // let the start-up poll and election settle: we measure idle
        producer.setAutoCommit(false);
        cpu0 = h.cpu.sample();
        long interval = TimeUnit.MILLISECONDS.toNanos(o.w2IntervalMs());
        long next = System.nanoTime();
        for (int i = 0; i < o.w2Jobs(); i++) {
          Sleep.until(next);
          long id = system.enqueueOne(producer, ThroughputWorkload.QUEUE);
          producer.commit();
          tracker.committed(id, System.nanoTime());
          next += interval;
        }
        if (!tracker.awaitStarted(o.w2Jobs(), Duration.ofSeconds(30))) {
          throw new IllegalStateException(
              system.name() + " started only " + tracker.started() + " of " + o.w2Jobs() + " jobs");
        }
        cpu = h.cpu.sample().since(cpu0);
        try (Connection c = pool.getConnection()) {
          var claimNanos = new HashMap<Long, Long>();
          system
              .claimedAt(c, tracker.committedIds())
              .forEach((id, at) -> claimNanos.put(id, tracker.nanosOf(at)));
          byClaim = tracker.latencyPartsMicros(claimNanos);
        }
      }
      long[] us = tracker.latenciesMicros();
      long[][] parts = tracker.latencyPartsMicros();
      return new Run(
          Stats.percentile(us, 50) / 1e3,
          Stats.percentile(us, 95) / 1e3,
          Stats.percentile(us, 99) / 1e3,
          us[us.length - 1] / 1e3,
          us.length,
          Stats.percentile(parts[0], 50) / 1e3,
          Stats.percentile(parts[1], 50) / 1e3,
          Stats.percentile(byClaim[0], 50) / 1e3,
          Stats.percentile(byClaim[0], 99) / 1e3,
          Stats.percentile(byClaim[1], 50) / 1e3,
          Stats.percentile(byClaim[1], 99) / 1e3,
          cpu);
    }
  }

  private void report(Results results, List<Run> pgbus, List<Run> raw) {
    int n = pgbus.size();
    var rows = new ArrayList<List<String>>();
    String[] names = {"p50", "p95", "p99", "max"};
    double[][] p = new double[4][n];
    double[][] r = new double[4][n];
    for (int i = 0; i < n; i++) {
      Run a = pgbus.get(i);
      Run b = raw.get(i);
      double[] av = {a.p50, a.p95, a.p99, a.max};
      double[] bv = {b.p50, b.p95, b.p99, b.max};
      for (int k = 0; k < 4; k++) {
        p[k][i] = av[k];
        r[k][i] = bv[k];
      }
    }
    for (int k = 0; k < 4; k++) {
      double[] ratio = new double[n];
      for (int i = 0; i < n; i++) {
        ratio[i] = p[k][i] / r[k][i];
      }
      rows.add(
          List.of(
              names[k] + ", ms",
              Stats.spread(p[k], "%.2f"),
              Stats.spread(r[k], "%.2f"),
              Stats.spread(ratio, "%.2f")));
    }
    double[] pw = pgbus.stream().mapToDouble(Run::toWakeP50).toArray();
    double[] rw = raw.stream().mapToDouble(Run::toWakeP50).toArray();
    double[] pd = pgbus.stream().mapToDouble(Run::toStartP50).toArray();
    double[] rd = raw.stream().mapToDouble(Run::toStartP50).toArray();
    rows.add(
        List.of(
            "*split, p50:* commit → wake reaches the consumers, ms",
            Stats.spread(pw, "%.2f"),
            Stats.spread(rw, "%.2f"),
            ""));
    rows.add(
        List.of(
            "*split, p50:* wake → handler start (claim, dispatch), ms",
            Stats.spread(pd, "%.2f"),
            Stats.spread(rd, "%.2f"),
            ""));
    BenchOptions o = h.options;
    results.section(
        "W2 wake latency at idle",
        "One job every "
            + o.w2IntervalMs()
            + " ms, "
            + o.w2Jobs()
            + " in all, each committed by a producer on its own connection; latency from the"
            + " commit returning to the handler starting. Median [min–max] over "
            + n
            + " runs.\n\n"
            + Results.table(List.of("W2", "pgbus", "raw", "pgbus / raw"), rows));
    double p50 = Stats.median(p[0]);
    double p99 = Stats.median(p[2]);
    results.target(
        "W2 wake latency (Java SE)",
        "p50 ≤ 3 ms, p99 ≤ 10 ms",
        Stats.f("p50 %.2f ms", p50) + ", " + Stats.f("p99 %.2f ms", p99),
        p50 <= 3 && p99 <= 10,
        Stats.f("raw: p50 %.2f ms", Stats.median(r[0]))
            + Stats.f(", p99 %.2f ms", Stats.median(r[2])));
  }
}

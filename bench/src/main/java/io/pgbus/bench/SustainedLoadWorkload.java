package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W4: sustained load. A producer on its own connection offers the rate for the duration, committing
 * what is due every tick in one transaction (one NOTIFY per commit); the backlog (committed but not
 * started) is sampled every second in this JVM, so sampling adds no SQL.
 */
final class SustainedLoadWorkload {

  /**
   * One system in one run.
   *
   * @param offered jobs/s the producer achieved
   * @param slope backlog growth by least squares over the load, jobs/s
   * @param maxBacklog the largest sampled backlog
   * @param endBacklog mean backlog over the last 10 s of the load
   * @param drainSeconds time from the end of the load until every job had started
   */
  record Run(
      double offered,
      double p50,
      double p95,
      double p99,
      double max,
      double slope,
      double maxBacklog,
      double endBacklog,
      double drainSeconds,
      CpuMeter.Usage cpu,
      Map<StatementKind, Long> statements,
      long xacts,
      long walSyncs,
      long jobs) {

    boolean flat(int rate) {
      // Growth below 1% of the offered rate, and the end of the run no worse than a few ticks.
      return slope <= 0.01 * rate && endBacklog <= 0.1 * rate;
    }
  }

  private final Harness h;

  SustainedLoadWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    Map<String, List<Run>> runs =
        h.eachRun(
            (s, r) -> {
              Run run = once(s, r);
              h.log(
                  "W4 run %d %-5s offered %.0f jobs/s, p95 %.2f ms, backlog slope %.2f jobs/s,"
                      + " max %.0f, end %.0f, %s",
                  r,
                  s.name(),
                  run.offered,
                  run.p95,
                  run.slope,
                  run.maxBacklog,
                  run.endBacklog,
                  run.flat(h.options.w4Rate()) ? "flat" : "GROWS");
              return run;
            });
    report(results, runs.get("pgbus"), runs.get("raw"));
  }

  private Run once(QueueSystem system, int run) throws Exception {
    BenchOptions o = h.options;
    try (BenchDatabase db = h.server.createDatabase("w4_" + system.name() + run)) {
      h.install(system, db);
      HikariDataSource pool = db.pool(system.name() + "-pool", Harness.POOL, Harness.POOL);
      var tracker = new JobTracker();
      var produced = new AtomicLong();
      var times = new ArrayList<Double>();
      var backlog = new ArrayList<Double>();
      ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
      double seconds;
      double drain;
      CpuMeter.Usage cpu;
      ServerStats.Snapshot before;
      ServerStats.Snapshot after;
      try (QueueSystem.Consumers consumers =
              system.start(db, pool, List.of(ThroughputWorkload.QUEUE), o.workers(), tracker);
          Connection producer = db.connect("bench-producer")) {
        consumers.awaitReady(Duration.ofSeconds(30));
        Sleep.millis(1_000);
        producer.setAutoCommit(false);
        before = h.stats.snapshot(db.name());
        CpuMeter.Sample cpu0 = h.cpu.sample();
        long start = System.nanoTime();
        sampler.scheduleAtFixedRate(
            () -> {
              times.add((System.nanoTime() - start) / 1e9);
              backlog.add((double) Math.max(0, produced.get() - tracker.started()));
            },
            1,
            1,
            TimeUnit.SECONDS);
        long end = start + TimeUnit.SECONDS.toNanos(o.w4Seconds());
        long tick = TimeUnit.MILLISECONDS.toNanos(o.w4TickMs());
        long next = start;
        while (next < end) {
          Sleep.until(next);
          long due = (long) ((System.nanoTime() - start) / 1e9 * o.w4Rate()) - produced.get();
          if (due > 0) {
            long[] ids =
                system.enqueueBatch(producer, ThroughputWorkload.QUEUE, (int) Math.min(due, 1_000));
            producer.commit();
            long committed = System.nanoTime();
            for (long id : ids) {
              tracker.committed(id, committed);
            }
            produced.addAndGet(ids.length);
          }
          next += tick;
        }
        seconds = (System.nanoTime() - start) / 1e9;
        sampler.shutdown();
        sampler.awaitTermination(5, TimeUnit.SECONDS);
        long loadEnd = System.nanoTime();
        cpu = h.cpu.sample().since(cpu0);
        if (!tracker.awaitStarted(produced.get(), Duration.ofMinutes(2))) {
          throw new IllegalStateException(
              system.name()
                  + " started only "
                  + tracker.started()
                  + " of "
                  + produced.get()
                  + " jobs");
        }
        drain = (System.nanoTime() - loadEnd) / 1e9;
        tracker.awaitFinished(produced.get(), Duration.ofSeconds(30));
      } finally {
        sampler.shutdownNow();
      }
      // Counted once consumers and producer are closed: it includes the short drain, whose
      // transactions belong to the jobs produced.
      after = ServerStats.settled(h.stats, db, pool);
      long[] us = tracker.latenciesMicros();
      // The sampler has terminated (awaitTermination above): its lists are safe to read.
      double[] x = times.stream().mapToDouble(Double::doubleValue).toArray();
      double[] y = backlog.stream().mapToDouble(Double::doubleValue).toArray();
      int n = Math.min(x.length, y.length);
      double endBacklog = 0;
      int last = Math.min(10, n);
      for (int i = n - last; i < n; i++) {
        endBacklog += y[i] / last;
      }
      return new Run(
          produced.get() / seconds,
          Stats.percentile(us, 50) / 1e3,
          Stats.percentile(us, 95) / 1e3,
          Stats.percentile(us, 99) / 1e3,
          us.length == 0 ? Double.NaN : us[us.length - 1] / 1e3,
          Stats.slope(java.util.Arrays.copyOf(x, n), java.util.Arrays.copyOf(y, n)),
          Stats.max(java.util.Arrays.copyOf(y, n)),
          endBacklog,
          drain,
          cpu,
          after.callsSince(before),
          after.xactCommit() - before.xactCommit(),
          after.walSyncs() - before.walSyncs(),
          produced.get());
    }
  }

  private void report(Results results, List<Run> pgbus, List<Run> raw) {
    BenchOptions o = h.options;
    var rows = new ArrayList<List<String>>();
    rows.add(row("offered, jobs/s", pgbus, raw, Run::offered, "%.0f"));
    rows.add(row("latency p50, ms", pgbus, raw, Run::p50, "%.2f"));
    rows.add(row("latency p95, ms", pgbus, raw, Run::p95, "%.2f"));
    rows.add(row("latency p99, ms", pgbus, raw, Run::p99, "%.2f"));
    rows.add(row("latency max, ms", pgbus, raw, Run::max, "%.1f"));
    rows.add(row("backlog slope, jobs/s", pgbus, raw, Run::slope, "%.2f"));
    rows.add(row("backlog max, jobs", pgbus, raw, Run::maxBacklog, "%.0f"));
    rows.add(row("backlog, mean of last 10 s", pgbus, raw, Run::endBacklog, "%.1f"));
    rows.add(row("drain after the load, s", pgbus, raw, Run::drainSeconds, "%.2f"));
    rows.add(row("JVM cores busy", pgbus, raw, r -> r.cpu.jvm(), "%.2f"));
    rows.add(row("PostgreSQL cores busy", pgbus, raw, r -> r.cpu.server(), "%.2f"));
    rows.add(row("other cores busy (machine load)", pgbus, raw, r -> r.cpu.others(), "%.2f"));
    if (h.server.statements()) {
      rows.add(
          row(
              "statements/job (without BEGIN/COMMIT)",
              pgbus,
              raw,
              r -> ThroughputWorkload.work(r.statements) / (double) r.jobs,
              "%.2f"));
    }
    rows.add(row("committed transactions/job", pgbus, raw, r -> r.xacts / (double) r.jobs, "%.2f"));
    rows.add(row("WAL flushes/job", pgbus, raw, r -> r.walSyncs / (double) r.jobs, "%.2f"));
    rows.add(
        List.of(
            "flat backlog (runs)",
            pgbus.stream().filter(r -> r.flat(o.w4Rate())).count() + " of " + pgbus.size(),
            raw.stream().filter(r -> r.flat(o.w4Rate())).count() + " of " + raw.size()));
    results.section(
        "W4 sustained load",
        String.format(
                java.util.Locale.ROOT,
                "%,d jobs/s for %d s: every %d ms the producer (its own connection) commits the jobs"
                    + " due by then in one transaction. Latency from commit to handler start."
                    + " Backlog = committed but not started, sampled each second; flat = it grows by"
                    + " less than 1%% of the rate and ends the run under 0.1 s worth of jobs."
                    + " Median [min–max] over %d runs.%n%n",
                o.w4Rate(),
                o.w4Seconds(),
                o.w4TickMs(),
                pgbus.size())
            + Results.table(List.of("W4", "pgbus", "raw"), rows));
    boolean flat = pgbus.stream().allMatch(r -> r.flat(o.w4Rate()));
    results.target(
        "W4 sustained " + o.w4Rate() + " jobs/s",
        "flat backlog",
        (flat ? "flat" : "grows")
            + Stats.f(", p95 %.2f ms", Stats.median(values(pgbus, Run::p95)))
            + Stats.f(", slope %.2f jobs/s", Stats.median(values(pgbus, Run::slope))),
        flat,
        Stats.f("raw p95 %.2f ms", Stats.median(values(raw, Run::p95))));
  }

  private static List<String> row(
      String name,
      List<Run> a,
      List<Run> b,
      java.util.function.ToDoubleFunction<Run> f,
      String fmt) {
    return List.of(name, Stats.spread(values(a, f), fmt), Stats.spread(values(b, f), fmt));
  }

  private static double[] values(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
    return runs.stream().mapToDouble(f).toArray();
  }
}

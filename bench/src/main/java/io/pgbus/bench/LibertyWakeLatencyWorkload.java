package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * W5: W2 inside Liberty. The running demo server consumes; this bench, as another application on
 * its own auto-commit connection, commits {@code SELECT pgbus.enqueue('greetings', ...)} every W2
 * interval and notes the wall clock when the commit returns. The demo's handler stores the wall
 * clock as it starts ({@code demo_greeting.handler_started_at}); both clocks are this machine's, so
 * the difference is the commit-to-handler-start latency inside the server. It is set beside pgbus's
 * W2 figures (Java SE) of the same bench run.
 */
final class LibertyWakeLatencyWorkload {

  /** The demo's queue (its GreetingHandler), read by the demo's default capsule. */
  static final String QUEUE = "greetings";

  /** Jobs enqueued in one statement to warm the server's JIT, as W1's warm-up does in Java SE. */
  private static final int WARMUP_BURST = 4_000;

  /**
   * Latency figures of one run, in milliseconds; early = handlers that started before the commit
   * returned; cores busy (on average) in the server JVM (-1 when unknown) and on the machine.
   */
  record Run(
      double p50,
      double p95,
      double p99,
      double max,
      int jobs,
      int early,
      double toClaimP50,
      double toClaimP99,
      double claimToStartP50,
      double claimToStartP99,
      double serverJvmCores,
      CpuMeter.Usage cpu) {

    /** Cores busy with everything but this bench, the server JVM and PostgreSQL. */
    double otherCores() {
      double o = cpu.others();
      return o < 0 || serverJvmCores < 0 ? -1 : Math.max(0, o - serverJvmCores);
    }
  }

  private final Harness h;
  private final List<WakeLatencyWorkload.Run> javaSe;

  /** {@code javaSe}: pgbus's W2 runs of this bench run, or empty when W2 did not run. */
  LibertyWakeLatencyWorkload(Harness h, List<WakeLatencyWorkload.Run> javaSe) {
    this.h = h;
    this.javaSe = javaSe;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    if (o.libertyDb() == null) {
      results.section(
          "W5 wake latency inside Liberty",
          "Skipped: W5 needs a running demo server. `./run-bench --with-demo --only=w2,w5` starts"
              + " one (./run-demo, with its embedded PostgreSQL), measures W2 and W5 on its"
              + " PostgreSQL, and stops it; or start ./run-demo yourself and pass"
              + " `--liberty-db=jdbc:postgresql://127.0.0.1:15432/pgbus?user=postgres"
              + " --liberty-http=http://127.0.0.1:9080`. See docs/performance.md.");
      return;
    }
    var demo = new DemoServer(o.libertyDb(), o.libertyHttp());
    h.log("W5 waiting for the demo server %s ...", demo);
    demo.awaitReady(Duration.ofMinutes(2));
    String database;
    try (Connection c = demo.connect("bench-w5-producer")) {
      database = demo.describe(c);
    }
    warmUp(demo);
    var runs = new ArrayList<Run>();
    for (int r = 1; r <= o.runs(); r++) {
      Run run = once(demo, "w5-" + r, o.w2Jobs());
      runs.add(run);
      h.log(
          "W5 run %d liberty p50 %.2f ms, p95 %.2f ms, p99 %.2f ms, max %.2f ms",
          r, run.p50, run.p95, run.p99, run.max);
    }
    report(results, demo, database, runs);
  }

  /**
   * Unmeasured: one burst the demo works through (the claim, dispatch and handler paths get
   * compiled), then a paced run as long as a measured one (the wake path).
   */
  private void warmUp(DemoServer demo) throws Exception {
    h.log(
        "W5 warm-up (unmeasured): %,d jobs in one statement, then %d paced",
        WARMUP_BURST, warmUpPaced());
    try (Connection c = demo.connect("bench-w5-producer");
        PreparedStatement burst =
            c.prepareStatement(
                "SELECT pgbus.enqueue(?, jsonb_build_object('name', ? || g))"
                    + " FROM generate_series(1, ?) AS g")) {
      burst.setString(1, QUEUE);
      burst.setString(2, "w5-warmup-");
      burst.setInt(3, WARMUP_BURST);
      var ids = new ArrayList<Long>();
      try (ResultSet rs = burst.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      long[] all = ids.stream().mapToLong(Long::longValue).toArray();
      int done = demo.awaitStarted(c, all, Duration.ofMinutes(5)).size();
      demo.forget(c, all);
      if (done < all.length) {
        throw new IllegalStateException(
            "W5 warm-up: the demo ran only " + done + " of " + all.length + " jobs in 5 minutes");
      }
    }
    once(demo, "w5-warmup", warmUpPaced());
  }

  // A whole run's worth: after the burst, the server JVM still spends much of its CPU compiling
  // (measured from its threads: the JIT used 0.06 of 0.12 cores with 100 paced jobs, 0.01 with
  // 1,200); a paced run also lets Liberty's thread pool settle to trickle traffic.
  private int warmUpPaced() {
    return h.options.w2Jobs();
  }

  private Run once(DemoServer demo, String label, int jobs) throws Exception {
    BenchOptions o = h.options;
    Sleep.millis(1_000); // the demo is idle, its capsule asleep: we measure a wake from idle
    String tag = label + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 40);
    var committed = new LinkedHashMap<Long, Instant>();
    try (Connection c = demo.connect("bench-w5-producer");
        PreparedStatement enqueue = c.prepareStatement("SELECT pgbus.enqueue(?, ?::jsonb)")) {
      CpuMeter.Sample cpu0 = h.cpu.sample();
      long serverCpu0 = demo.cpuNanos();
      long interval = TimeUnit.MILLISECONDS.toNanos(o.w2IntervalMs());
      long next = System.nanoTime();
      for (int i = 0; i < jobs; i++) {
        Sleep.until(next);
        enqueue.setString(1, QUEUE);
        enqueue.setString(2, "{\"name\": \"" + tag + "-" + i + "\"}");
        long id;
        // Auto-commit: the statement's commit is done when its result has come back.
        try (ResultSet rs = enqueue.executeQuery()) {
          rs.next();
          id = rs.getLong(1);
        }
        committed.put(id, Instant.now());
        next += interval;
      }
      long[] ids = committed.keySet().stream().mapToLong(Long::longValue).toArray();
      Map<Long, DemoServer.Started> started = demo.awaitStarted(c, ids, Duration.ofSeconds(30));
      CpuMeter.Usage cpu = h.cpu.sample().since(cpu0);
      long serverCpu = demo.cpuNanos();
      double serverCores =
          serverCpu < 0 || serverCpu0 < 0 ? -1 : (serverCpu - serverCpu0) / (cpu.seconds() * 1e9);
      demo.forget(c, ids);
      if (started.size() < ids.length) {
        throw new IllegalStateException(
            "W5: the demo started only "
                + started.size()
                + " of "
                + ids.length
                + " jobs of queue '"
                + QUEUE
                + "' within 30 s; does a capsule read it (pgbus.capsule.*.queues)?");
      }
      return measure(committed, started, serverCores, cpu);
    }
  }

  private static Run measure(
      Map<Long, Instant> committed,
      Map<Long, DemoServer.Started> started,
      double serverCores,
      CpuMeter.Usage cpu) {
    int n = committed.size();
    long[] total = new long[n];
    long[] toClaim = new long[n];
    long[] claimToStart = new long[n];
    int early = 0;
    int i = 0;
    for (Map.Entry<Long, Instant> e : committed.entrySet()) {
      DemoServer.Started s = started.get(e.getKey());
      long us = micros(e.getValue(), s.handlerStartedAt());
      if (us < 0) {
        early++; // the listener was signalled while the commit's reply was on its way back
      }
      total[i] = Math.max(0, us);
      toClaim[i] = Math.max(0, micros(e.getValue(), s.claimedAt()));
      claimToStart[i] =
          Math.max(0, micros(later(e.getValue(), s.claimedAt()), s.handlerStartedAt()));
      i++;
    }
    Arrays.sort(total);
    Arrays.sort(toClaim);
    Arrays.sort(claimToStart);
    return new Run(
        Stats.percentile(total, 50) / 1e3,
        Stats.percentile(total, 95) / 1e3,
        Stats.percentile(total, 99) / 1e3,
        total[n - 1] / 1e3,
        n,
        early,
        Stats.percentile(toClaim, 50) / 1e3,
        Stats.percentile(toClaim, 99) / 1e3,
        Stats.percentile(claimToStart, 50) / 1e3,
        Stats.percentile(claimToStart, 99) / 1e3,
        serverCores,
        cpu);
  }

  private static long micros(Instant from, Instant to) {
    return ChronoUnit.MICROS.between(from, to);
  }

  private static Instant later(Instant a, Instant b) {
    return a.isAfter(b) ? a : b;
  }

  private void report(Results results, DemoServer demo, String database, List<Run> runs) {
    BenchOptions o = h.options;
    boolean se = !javaSe.isEmpty();
    var rows = new ArrayList<List<String>>();
    row(rows, "p50, ms", runs, Run::p50, WakeLatencyWorkload.Run::p50);
    row(rows, "p95, ms", runs, Run::p95, WakeLatencyWorkload.Run::p95);
    row(rows, "p99, ms", runs, Run::p99, WakeLatencyWorkload.Run::p99);
    row(rows, "max, ms", runs, Run::max, WakeLatencyWorkload.Run::max);
    row(
        rows,
        "*split, p50:* commit → claim begins (the database's now()), ms",
        runs,
        Run::toClaimP50,
        WakeLatencyWorkload.Run::toClaimP50);
    row(
        rows,
        "*split, p99:* commit → claim begins, ms",
        runs,
        Run::toClaimP99,
        WakeLatencyWorkload.Run::toClaimP99);
    row(
        rows,
        "*split, p50:* claim begins → handler start, ms",
        runs,
        Run::claimToStartP50,
        WakeLatencyWorkload.Run::claimToStartP50);
    row(
        rows,
        "*split, p99:* claim begins → handler start, ms",
        runs,
        Run::claimToStartP99,
        WakeLatencyWorkload.Run::claimToStartP99);
    row(
        rows,
        "cores busy: the consumers' JVM (Liberty; in Java SE the bench's)",
        runs,
        Run::serverJvmCores,
        r -> r.cpu().jvm());
    row(rows, "cores busy: PostgreSQL", runs, r -> r.cpu().server(), r -> r.cpu().server());
    row(
        rows,
        "cores busy: everything else on the machine",
        runs,
        Run::otherCores,
        r -> r.cpu().others());
    int early = runs.stream().mapToInt(Run::early).sum();
    String server = DemoServer.hostPort(demo.jdbcUrl());
    String seServer =
        o.url() == null ? "the bench's embedded PostgreSQL" : DemoServer.hostPort(o.url());
    results.section(
        "W5 wake latency inside Liberty",
        "W2 against the running demo server (Open Liberty, "
            + server
            + "): a producer on its own"
            + " auto-commit connection commits `SELECT pgbus.enqueue('"
            + QUEUE
            + "', ...)` every "
            + o.w2IntervalMs()
            + " ms, "
            + o.w2Jobs()
            + " in all; the demo's GreetingHandler"
            + " stores `Instant.now()` as it starts (`demo_greeting.handler_started_at`); latency"
            + " is that minus the wall clock when the producer's commit returned (one machine, one"
            + " clock). The split is at the database's `now()` in the claim statement"
            + " (`pgbus.job.attempted_at`). Java SE is pgbus's W2 in this bench run"
            + (se
                ? ", on "
                    + (seServer.equals(server)
                        ? "the same PostgreSQL server (" + server + ")"
                        : seServer)
                : "")
            + "; the gap is the difference of the medians. Median [min–max] over "
            + runs.size()
            + " runs, after an unmeasured warm-up of "
            + String.format(Locale.ROOT, "%,d", WARMUP_BURST)
            + " jobs in one statement and "
            + warmUpPaced()
            + " paced. Cores busy are averages over"
            + " each run, Liberty's from its `cpu.processCpuTime` metric; on a small machine shared"
            + " with other work, the last row is what to read the latencies against.\n\n"
            + "Demo database: "
            + database
            + ".\n\n"
            + Results.table(List.of("W5", "Liberty", "Java SE (W2, pgbus)", "gap, ms"), rows)
            + (early > 0
                ? "\n"
                    + early
                    + " handler(s) started before the producer's commit had returned"
                    + " (the listener is signalled while the reply is on its way); counted as 0.\n"
                : "")
            + (se
                ? ""
                : "\nW2 did not run in this bench run, so there is no Java SE reference;"
                    + " use `--only=w2,w5`.\n"));
    double p50 = Stats.median(values(runs, Run::p50));
    double p99 = Stats.median(values(runs, Run::p99));
    String measured = Stats.f("p50 %.2f ms", p50) + ", " + Stats.f("p99 %.2f ms", p99);
    if (!se) {
      results.target(
          "W5 wake latency (Liberty)",
          "within 2 ms of Java SE W2",
          measured,
          null,
          "no W2 in this run");
      return;
    }
    double seP50 =
        Stats.median(javaSe.stream().mapToDouble(WakeLatencyWorkload.Run::p50).toArray());
    double seP99 =
        Stats.median(javaSe.stream().mapToDouble(WakeLatencyWorkload.Run::p99).toArray());
    results.target(
        "W5 wake latency (Liberty)",
        "p50 and p99 within 2 ms of Java SE (W2, this run)",
        measured + Stats.f(" (gap %+.2f", p50 - seP50) + Stats.f(" / %+.2f ms)", p99 - seP99),
        p50 - seP50 <= 2 && p99 - seP99 <= 2,
        Stats.f("Java SE: p50 %.2f ms", seP50)
            + Stats.f(", p99 %.2f ms", seP99)
            + "; Liberty p50 ≤ 5 ms and p99 ≤ 12 ms: "
            + (p50 <= 5 && p99 <= 12 ? "yes" : "no"));
  }

  /** A row of medians [min–max]; the gap column only for latencies, in ms. */
  private void row(
      List<List<String>> rows,
      String name,
      List<Run> runs,
      ToDoubleFunction<Run> liberty,
      ToDoubleFunction<WakeLatencyWorkload.Run> se) {
    boolean latency = name.endsWith("ms");
    double[] l = known(values(runs, liberty));
    double[] s = known(javaSe.stream().mapToDouble(se).toArray());
    rows.add(
        List.of(
            name,
            l.length == 0 ? "n/a" : Stats.spread(l, "%.2f"),
            s.length == 0 ? "n/a" : Stats.spread(s, "%.2f"),
            !latency || l.length == 0 || s.length == 0
                ? ""
                : Stats.f("%+.2f", Stats.median(l) - Stats.median(s))));
  }

  /** Drops the values that could not be measured (negative: no /proc, no metrics). */
  private static double[] known(double[] v) {
    return Arrays.stream(v).filter(x -> x >= 0).toArray();
  }

  private static double[] values(List<Run> runs, ToDoubleFunction<Run> f) {
    return runs.stream().mapToDouble(f).toArray();
  }
}

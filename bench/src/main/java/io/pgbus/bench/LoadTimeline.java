package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * A steady load on pgbus with default settings, read window by window: a producer on its own
 * connection commits what is due every tick (as W4), and at the end of each window the timeline
 * records jobs done, commit-to-start latency of the jobs committed in it, the claim's mean server
 * time (pg_stat_statements), pgbus.job's sizes and dead tuples, pgbus.job_history's size,
 * autovacuum runs, the database's client connections and this JVM's threads. Phases run one after
 * the other; each may start with an action (the long-transaction workload opens and commits its
 * transaction there).
 */
final class LoadTimeline {

  /** A stretch of the load; {@code onStart} runs on the producer thread as it begins. */
  record Phase(String name, int seconds, Action onStart) {}

  @FunctionalInterface
  interface Action {
    void run() throws Exception;
  }

  /** One window. */
  record Window(
      String phase,
      double endSeconds,
      double offeredPerSec,
      double donePerSec,
      double p50Ms,
      double p99Ms,
      double claimMeanMs,
      long claims,
      JobTable.Sample table,
      long connections,
      int jvmThreads) {

    static final List<String> HEADER =
        List.of(
            "phase",
            "t (s)",
            "offered/s",
            "done/s",
            "p50 ms",
            "p99 ms",
            "claim ms (mean)",
            "heap MB",
            "indexes MB",
            "claim idx MB",
            "history MB",
            "dead tuples",
            "autovacuums",
            "connections",
            "JVM threads");

    List<String> row() {
      return List.of(
          phase,
          Stats.f("%.0f", endSeconds),
          Stats.f("%.0f", offeredPerSec),
          Stats.f("%.0f", donePerSec),
          Stats.f("%.2f", p50Ms),
          Stats.f("%.2f", p99Ms),
          Stats.f("%.3f", claimMeanMs),
          JobTable.Sample.mb(table.heapBytes()),
          JobTable.Sample.mb(table.indexBytes()),
          JobTable.Sample.mb(table.claimIndexBytes()),
          JobTable.Sample.mb(table.historyBytes()),
          String.format(Locale.ROOT, "%,d", table.deadTuples()),
          Long.toString(table.autovacuums()),
          Long.toString(connections),
          Integer.toString(jvmThreads));
    }
  }

  private final Harness h;
  private final int rate;
  private final int windowSeconds;

  LoadTimeline(Harness h, int rate, int windowSeconds) {
    this.h = h;
    this.rate = rate;
    this.windowSeconds = windowSeconds;
  }

  List<Window> run(BenchDatabase db, List<Phase> phases) throws Exception {
    var pgbus = new PgbusSystem();
    h.install(pgbus, db);
    HikariDataSource pool = db.pool("pgbus-pool", Harness.POOL, Harness.POOL);
    var tracker = new JobTracker();
    var windows = new ArrayList<Window>();
    long tick = TimeUnit.MILLISECONDS.toNanos(h.options.w4TickMs());
    long windowNanos = TimeUnit.SECONDS.toNanos(windowSeconds);
    try (QueueSystem.Consumers consumers =
            pgbus.start(db, pool, List.of(ThroughputWorkload.QUEUE), h.options.workers(), tracker);
        Connection producer = db.connect("bench-producer");
        Connection sampler = pool.getConnection()) {
      consumers.awaitReady(Duration.ofSeconds(30));
      producer.setAutoCommit(false);
      long start = System.nanoTime();
      long produced = 0;
      long next = start;
      long phaseEnd = start;
      long windowStart = start;
      long windowProduced = 0;
      long windowFinished = 0;
      ServerStats.Snapshot stats = h.stats.snapshot(db.name());
      for (Phase phase : phases) {
        phaseEnd += TimeUnit.SECONDS.toNanos(phase.seconds());
        if (phase.onStart() != null) {
          phase.onStart().run();
        }
        h.log("  phase %s (%d s)", phase.name(), phase.seconds());
        // By the clock, not by ticks: under load a tick's enqueue and commit outlast the tick, and
        // a phase counted in ticks ran on (a 600 s hold lasted over 20 minutes at load 15-30).
        while (next < phaseEnd && System.nanoTime() < phaseEnd) {
          Sleep.until(next);
          long due = (long) ((System.nanoTime() - start) / 1e9 * rate) - produced;
          if (due > 0) {
            long[] ids =
                pgbus.enqueueBatch(producer, ThroughputWorkload.QUEUE, (int) Math.min(due, 1_000));
            producer.commit();
            long committed = System.nanoTime();
            for (long id : ids) {
              tracker.committed(id, committed);
            }
            produced += ids.length;
          }
          next += tick;
          long now = System.nanoTime();
          if (now - windowStart >= windowNanos || next >= phaseEnd || now >= phaseEnd) {
            // Latencies of the jobs that started in this window, whenever they were committed.
            ServerStats.Snapshot s = h.stats.snapshot(db.name());
            double[] claim = {0, 0};
            s.queriesSince(stats)
                .forEach(
                    (q, v) -> {
                      if (StatementKind.of(q) == StatementKind.CLAIM) {
                        claim[0] += v[0];
                        claim[1] += v[1];
                      }
                    });
            stats = s;
            long[] us = tracker.latenciesMicros(windowStart, now);
            double secs = (now - windowStart) / 1e9;
            long finished = tracker.finished();
            Window w =
                new Window(
                    phase.name(),
                    (now - start) / 1e9,
                    (produced - windowProduced) / secs,
                    (finished - windowFinished) / secs,
                    Stats.percentile(us, 50) / 1e3,
                    Stats.percentile(us, 99) / 1e3,
                    claim[0] == 0 ? Double.NaN : claim[1] / claim[0],
                    (long) claim[0],
                    JobTable.sample(sampler),
                    h.stats.connections(db.name()).values().stream()
                        .mapToLong(Long::longValue)
                        .sum(),
                    ManagementFactory.getThreadMXBean().getThreadCount());
            windows.add(w);
            h.log("  %s", String.join(" | ", w.row()));
            windowStart = now;
            windowProduced = produced;
            windowFinished = finished;
          }
        }
        // A producer that fell behind starts the next phase on the clock, not with a burst.
        next = Math.max(next, System.nanoTime());
      }
      tracker.awaitFinished(produced, Duration.ofMinutes(2));
    }
    return windows;
  }

  /** Mean of a window value over the windows of {@code phase}. */
  static double mean(
      List<Window> windows, String phase, java.util.function.ToDoubleFunction<Window> f) {
    return windows.stream()
        .filter(w -> w.phase().equals(phase))
        .mapToDouble(f)
        .filter(v -> !Double.isNaN(v))
        .average()
        .orElse(Double.NaN);
  }

  static String table(List<Window> windows) {
    return Results.table(Window.HEADER, windows.stream().map(Window::row).toList());
  }
}

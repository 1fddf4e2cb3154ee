package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.pgbus.engine.JobStore;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Many queues: the same load over 10 queues and over 1,000, with a tenth of them busy (all 10 of
 * 10; 100 of 1,000). Ten capsules of one slot each split the queues into ten contiguous blocks, so
 * each capsule's claim walks its block in order. Every tick the producer commits the jobs due into
 * the next busy queue (one NOTIFY per commit in both shapes), so only the queue count differs.
 * Read: commit-to-start latency (which includes the listener routing each NOTIFY to its capsule),
 * the claim's mean server time (pg_stat_statements), and the ticker's one statement over all the
 * queues, timed from JDBC after the load.
 */
final class ManyQueuesWorkload {

  private static final int CAPSULES = 10;

  record Run(
      int queues,
      int busy,
      double offered,
      double donePerSec,
      double p50,
      double p99,
      double claimMs,
      double claimsPerJob,
      double pollP50,
      double pollP99) {}

  private final Harness h;

  ManyQueuesWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    var runs = new ArrayList<Run>();
    for (int r = 0; r < o.runs(); r++) {
      var order = new ArrayList<>(o.queueCounts());
      if (r % 2 == 1) {
        java.util.Collections.reverse(order);
      }
      for (int n : order) {
        Run run = once(n, r + 1);
        runs.add(run);
        h.log(
            "queues run %d: %d queues (%d busy): done %.0f jobs/s, p50 %.2f ms, p99 %.2f ms, claim"
                + " %.3f ms, %.2f claims/job, poll statement p50 %.2f ms",
            r + 1,
            n,
            run.busy,
            run.donePerSec,
            run.p50,
            run.p99,
            run.claimMs,
            run.claimsPerJob,
            run.pollP50);
      }
    }
    var rows = new ArrayList<List<String>>();
    for (int n : o.queueCounts()) {
      List<Run> of = runs.stream().filter(x -> x.queues == n).toList();
      rows.add(
          List.of(
              n + " (" + of.get(0).busy + " busy)",
              Stats.spread(values(of, Run::donePerSec), "%.0f"),
              Stats.spread(values(of, Run::p50), "%.2f"),
              Stats.spread(values(of, Run::p99), "%.2f"),
              Stats.spread(values(of, Run::claimMs), "%.3f"),
              Stats.spread(values(of, Run::claimsPerJob), "%.2f"),
              Stats.spread(values(of, Run::pollP50), "%.2f"),
              Stats.spread(values(of, Run::pollP99), "%.2f")));
    }
    results.section(
        "Many queues",
        String.format(
                Locale.ROOT,
                "%,d jobs/s for %d s into a tenth of the queues (every tick's jobs into the next"
                    + " busy queue), %d capsules of 1 slot over contiguous blocks of queues,"
                    + " default settings. Median [min–max] over %d run(s), the shapes"
                    + " alternating.%n%n",
                o.w4Rate(),
                o.w4Seconds(),
                CAPSULES,
                o.runs())
            + Results.table(
                List.of(
                    "queues",
                    "done/s",
                    "p50 ms",
                    "p99 ms",
                    "claim ms (mean)",
                    "claims/job",
                    "poll statement p50 ms",
                    "p99 ms"),
                rows));
  }

  private Run once(int n, int run) throws Exception {
    BenchOptions o = h.options;
    var queues = new ArrayList<String>();
    for (int i = 0; i < n; i++) {
      queues.add(String.format(Locale.ROOT, "q%05d", i));
    }
    int step = Math.max(1, n / 100);
    var busy = new ArrayList<String>();
    for (int i = 0; i < n; i += step) {
      busy.add(queues.get(i));
    }
    var capsules = new ArrayList<List<String>>();
    for (int c = 0; c < CAPSULES; c++) {
      capsules.add(List.copyOf(queues.subList(c * n / CAPSULES, (c + 1) * n / CAPSULES)));
    }
    var pgbus = new PgbusSystem();
    try (BenchDatabase db = h.server.createDatabase("queues" + n + "_" + run)) {
      h.install(pgbus, db);
      HikariDataSource pool = db.pool("pgbus-pool", Harness.POOL, Harness.POOL);
      var tracker = new JobTracker();
      long produced = 0;
      double seconds;
      ServerStats.Snapshot before;
      try (PgbusSystem.Running consumers = pgbus.startCapsules(db, pool, capsules, 1, tracker);
          Connection producer = db.connect("bench-producer")) {
        consumers.awaitReady(Duration.ofSeconds(30));
        producer.setAutoCommit(false);
        before = h.stats.snapshot(db.name());
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(o.w4Seconds());
        long tick = TimeUnit.MILLISECONDS.toNanos(o.w4TickMs());
        int next = 0;
        // The clock ends the load, not the tick count: on a loaded machine ticks run late.
        for (long t = start; t < end && System.nanoTime() < end; t += tick) {
          Sleep.until(t);
          long due = (long) ((System.nanoTime() - start) / 1e9 * o.w4Rate()) - produced;
          if (due > 0) {
            long[] ids =
                pgbus.enqueueBatch(
                    producer, busy.get(next++ % busy.size()), (int) Math.min(due, 1_000));
            producer.commit();
            long committed = System.nanoTime();
            for (long id : ids) {
              tracker.committed(id, committed);
            }
            produced += ids.length;
          }
        }
        seconds = (System.nanoTime() - start) / 1e9;
        if (!tracker.awaitFinished(produced, Duration.ofMinutes(2))) {
          throw new IllegalStateException(
              "finished only " + tracker.finished() + " of " + produced + " jobs");
        }
      }
      double done = produced / ((tracker.lastFinishedNanos() - before.nanos()) / 1e9);
      ServerStats.Snapshot after = h.stats.snapshot(db.name());
      double[] claim = {0, 0};
      after
          .queriesSince(before)
          .forEach(
              (q, v) -> {
                if (StatementKind.of(q) == StatementKind.CLAIM) {
                  claim[0] += v[0];
                  claim[1] += v[1];
                }
              });
      // The ticker's statement over every queue, with the table as the load left it.
      var store = new JobStore();
      long[] poll = new long[200];
      try (Connection c = pool.getConnection()) {
        pgbus.enqueueOne(c, busy.get(0)); // one head to find, as under load
        for (int i = 0; i < poll.length; i++) {
          long t0 = System.nanoTime();
          store.jobQueueHeads(c, queues);
          poll[i] = System.nanoTime() - t0;
        }
      }
      java.util.Arrays.sort(poll);
      long[] us = tracker.latenciesMicros();
      return new Run(
          n,
          busy.size(),
          produced / seconds,
          done,
          Stats.percentile(us, 50) / 1e3,
          Stats.percentile(us, 99) / 1e3,
          claim[0] == 0 ? Double.NaN : claim[1] / claim[0],
          claim[0] / produced,
          Stats.percentile(poll, 50) / 1e6,
          Stats.percentile(poll, 99) / 1e6);
    }
  }

  private static double[] values(List<Run> runs, java.util.function.ToDoubleFunction<Run> f) {
    return runs.stream().mapToDouble(f).toArray();
  }
}

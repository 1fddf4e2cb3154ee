package io.pgbus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pgbus.engine.PoolerGuard;
import io.pgbus.engine.testing.PgBouncer;
import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * POOLER (opt-in, issue #33): pgbus with its JTA-like pool straight at PostgreSQL and through a
 * real PgBouncer in transaction mode (Debian's package, a process of this run's own, {@code
 * default_pool_size} = the pool's size), in one run, alternating which goes first. The listener is
 * direct in both, as docs/operations.md ("Behind PgBouncer") says. Each run measures W1's
 * processing (a backlog of {@code w1Jobs} drained by {@code workers} slots) and W2's wake latency
 * (one job every {@code w2IntervalMs}, committed by a producer through the same path, from its
 * commit to its handler's start). The pool through PgBouncer is guarded as the server's is ({@link
 * PoolerGuard}: pgbus's statements unprepared), the producer's URL has {@code prepareThreshold=0}.
 */
final class PoolerWorkload {

  /** One run of one path. */
  record Run(double processPerSecond, double wakeP50, double wakeP95, double wakeP99) {}

  private final Harness h;

  PoolerWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    if (!PgBouncer.available()) {
      h.log("POOLER skipped: %s", PgBouncer.MISSING);
      results.section("POOLER: through PgBouncer", "Skipped: " + PgBouncer.MISSING + ".");
      return;
    }
    var direct = new ArrayList<Run>();
    var pooled = new ArrayList<Run>();
    for (int r = 0; r < h.options.runs(); r++) {
      boolean pooledFirst = r % 2 == 1;
      for (boolean throughPooler : pooledFirst ? List.of(true, false) : List.of(false, true)) {
        Run run = once(throughPooler, r + 1);
        (throughPooler ? pooled : direct).add(run);
        h.log(
            "POOLER run %d %-9s process %.0f jobs/s, wake p50 %.2f ms, p95 %.2f ms, p99 %.2f ms",
            r + 1,
            throughPooler ? "pgbouncer" : "direct",
            run.processPerSecond,
            run.wakeP50,
            run.wakeP95,
            run.wakeP99);
      }
    }
    report(results, direct, pooled);
  }

  private Run once(boolean throughPooler, int run) throws Exception {
    BenchOptions o = h.options;
    var pgbus = new PgbusSystem();
    try (BenchDatabase db =
        h.server.createDatabase("pooler_" + (throughPooler ? "pgb" : "direct") + run)) {
      h.install(pgbus, db);
      URI server = URI.create(db.url().substring("jdbc:".length()));
      PgBouncer pgb = null;
      HikariDataSource raw;
      DataSource pool;
      String producerUrl;
      try {
        if (throughPooler) {
          pgb =
              PgBouncer.inFrontOf(server.getHost(), server.getPort())
                  .poolSize(Harness.POOL)
                  .start();
          String url = pgb.jdbcUrl(db.name()) + "&user=postgres";
          raw = hikari(url);
          var guard = new PoolerGuard();
          guard.inspect(raw);
          pool = guard.wrap(raw);
          producerUrl = url + "&prepareThreshold=0";
        } else {
          raw = db.pool("pgbus-pool", Harness.POOL, Harness.POOL);
          pool = raw;
          producerUrl = null;
        }
        double process = process(pgbus, db, pool, o.w1Jobs());
        long[] us = wake(pgbus, db, pool, producerUrl);
        raw.close();
        return new Run(
            process,
            Stats.percentile(us, 50) / 1e3,
            Stats.percentile(us, 95) / 1e3,
            Stats.percentile(us, 99) / 1e3);
      } finally {
        if (pgb != null) {
          pgb.close();
        }
      }
    }
  }

  private static HikariDataSource hikari(String url) {
    var hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setPoolName("pgbus-pool-pgbouncer");
    hc.setMaximumPoolSize(Harness.POOL);
    hc.setMinimumIdle(Harness.POOL);
    hc.setConnectionTimeout(60_000);
    return new HikariDataSource(hc);
  }

  /** W1's processing: a backlog enqueued first, then drained; jobs per second. */
  private double process(PgbusSystem pgbus, BenchDatabase db, DataSource pool, int jobs)
      throws Exception {
    int left = jobs;
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      while (left > 0) {
        int n = Math.min(left, h.options.w1Batch());
        pgbus.enqueueBatch(c, ThroughputWorkload.QUEUE, n);
        c.commit();
        left -= n;
      }
      c.setAutoCommit(true);
    }
    var tracker = new JobTracker();
    long t0 = System.nanoTime();
    try (QueueSystem.Consumers consumers =
        pgbus.start(db, pool, List.of(ThroughputWorkload.QUEUE), h.options.workers(), tracker)) {
      if (!tracker.awaitFinished(jobs, Duration.ofMinutes(5))) {
        throw new IllegalStateException("finished only " + tracker.finished() + " of " + jobs);
      }
    }
    return jobs / ((tracker.lastFinishedNanos() - t0) / 1e9);
  }

  /** W2's wake latency: commit returned → handler started, in microseconds, sorted. */
  private long[] wake(PgbusSystem pgbus, BenchDatabase db, DataSource pool, String producerUrl)
      throws Exception {
    BenchOptions o = h.options;
    var tracker = new JobTracker();
    try (QueueSystem.Consumers consumers =
            pgbus.start(db, pool, List.of(ThroughputWorkload.QUEUE), o.workers(), tracker);
        Connection producer =
            producerUrl == null
                ? db.connect("bench-producer")
                : java.sql.DriverManager.getConnection(producerUrl)) {
      consumers.awaitReady(Duration.ofSeconds(30));
      Sleep.millis(1_000);
      producer.setAutoCommit(false);
      long interval = TimeUnit.MILLISECONDS.toNanos(o.w2IntervalMs());
      long next = System.nanoTime();
      for (int i = 0; i < o.w2Jobs(); i++) {
        Sleep.until(next);
        long id = pgbus.enqueueOne(producer, ThroughputWorkload.QUEUE);
        producer.commit();
        tracker.committed(id, System.nanoTime());
        next += interval;
      }
      if (!tracker.awaitStarted(o.w2Jobs(), Duration.ofSeconds(30))) {
        throw new IllegalStateException("started only " + tracker.started() + " of " + o.w2Jobs());
      }
    }
    return tracker.latenciesMicros();
  }

  private void report(Results results, List<Run> direct, List<Run> pooled) {
    int n = direct.size();
    var rows = new ArrayList<List<String>>();
    rows.add(
        row(
            "W1 processing, jobs/s (" + h.options.workers() + " slots)",
            direct,
            pooled,
            Run::processPerSecond,
            "%.0f"));
    rows.add(row("W2 wake latency p50, ms", direct, pooled, Run::wakeP50, "%.2f"));
    rows.add(row("W2 wake latency p95, ms", direct, pooled, Run::wakeP95, "%.2f"));
    rows.add(row("W2 wake latency p99, ms", direct, pooled, Run::wakeP99, "%.2f"));
    results.section(
        "POOLER: through PgBouncer (transaction mode)",
        "The pool (size "
            + Harness.POOL
            + ") straight at PostgreSQL, and through a PgBouncer in transaction mode with"
            + " default_pool_size "
            + Harness.POOL
            + " (pgbus's statements unprepared by PoolerGuard); the listener direct in both."
            + " Median [min–max] over "
            + n
            + " runs, alternating which path goes first.\n\n"
            + Results.table(List.of("POOLER", "direct", "PgBouncer", "PgBouncer / direct"), rows));
  }

  private static List<String> row(
      String name,
      List<Run> direct,
      List<Run> pooled,
      java.util.function.ToDoubleFunction<Run> f,
      String format) {
    double[] d = direct.stream().mapToDouble(f).toArray();
    double[] p = pooled.stream().mapToDouble(f).toArray();
    double[] ratio = new double[d.length];
    for (int i = 0; i < d.length; i++) {
      ratio[i] = p[i] / d[i];
    }
    return List.of(
        name, Stats.spread(d, format), Stats.spread(p, format), Stats.spread(ratio, "%.2f"));
  }
}

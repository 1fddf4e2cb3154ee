package io.pgbus.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Size: does the claim, and W1 processing, stay flat as the table grows? Two databases side by
 * side: a reference table that holds only the jobs of the measurement, and a grown one that keeps
 * 0, 1M, 10M finished (completed) jobs of the measured queue in pgbus.job_history's day partitions
 * (where the leader's archive moves them, V33), then also a backlog waiting in one queue. At each
 * stage both are measured back to back, so the ratio grown / reference is taken under the same
 * machine load. A measurement times {@code claimSamples} single claims of up to 10 jobs
 * (pgbus.claim_jobs from JDBC, round trip included), then W1 on the same database: a batch of jobs
 * worked off by the engine with default settings.
 */
final class TableSizeWorkload {

  static final String BACKLOG = "backlog";
  private static final int CLAIM_BATCH = 10;
  private static final String CLAIM =
      "SELECT job_id FROM pgbus.claim_jobs(?, "
          + CLAIM_BATCH
          + ", 'bench-claim', interval '5 minutes')";
  private static final String CLAIMED_DONE =
      """
      UPDATE pgbus.job SET state = 'completed', finalized_at = now(), lease_expires_at = NULL
       WHERE state = 'running' AND attempted_by = 'bench-claim'
      """;

  /** One measurement of one database. */
  record Measure(
      double claimP50,
      double claimP99,
      double claimMean,
      double processPerSec,
      JobTable.Sample table) {}

  private final Harness h;

  TableSizeWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    var rows = new ArrayList<List<String>>();
    var claimRatios = new ArrayList<Double>();
    try (BenchDatabase ref = h.server.createDatabase("size_ref");
        BenchDatabase grown = h.server.createDatabase("size_grown")) {
      var pgbus = new PgbusSystem();
      h.install(pgbus, ref);
      h.install(pgbus, grown);
      HikariDataSource refPool = ref.pool("pgbus-pool", Harness.POOL, Harness.POOL);
      HikariDataSource grownPool = grown.pool("pgbus-pool", Harness.POOL, Harness.POOL);
      h.log("size: warm-up (unmeasured) ...");
      measure(ref, refPool, ThroughputWorkload.QUEUE, false);
      long have = 0;
      for (int target : o.sizeFinished()) {
        try (Connection c = grownPool.getConnection()) {
          h.log("size: growing to %,d finished jobs ...", target);
          JobTable.addFinished(c, ThroughputWorkload.QUEUE, target - have, h);
        }
        have = target;
        String label = String.format(Locale.ROOT, "%,d finished in job_history", target);
        stage(label, ref, refPool, grown, grownPool, ThroughputWorkload.QUEUE, rows, claimRatios);
      }
      if (o.sizeWaiting() > 0) {
        try (Connection c = grownPool.getConnection()) {
          h.log("size: %,d jobs waiting in queue %s ...", o.sizeWaiting(), BACKLOG);
          JobTable.addWaiting(c, BACKLOG, o.sizeWaiting(), h);
        }
        String label =
            String.format(
                Locale.ROOT,
                "%,d finished + %,d waiting in the claimed queue",
                have,
                o.sizeWaiting());
        stage(label, ref, refPool, grown, grownPool, BACKLOG, rows, claimRatios);
      }
    }
    results.section(
        "Size: claims and W1 as the table grows",
        String.format(
                Locale.ROOT,
                "A reference table (only the jobs being measured) beside a grown one, measured"
                    + " back to back at each stage. Claim: %,d calls of pgbus.claim_jobs for up to %d"
                    + " jobs from one queue, timed from JDBC. W1: %,d jobs worked off by the"
                    + " engine with default settings (%d slots). The finished jobs are completed"
                    + " jobs of the claimed queue, within retention, in pgbus.job_history's day"
                    + " partitions as the leader leaves them; each table is VACUUM ANALYZEd after"
                    + " its fill. The waiting stage claims from a queue holding the"
                    + " backlog; its W1 works off %,d of the backlog.%n%n",
                o.claimSamples(),
                CLAIM_BATCH,
                o.w1Jobs(),
                o.workers(),
                o.w1Jobs())
            + Results.table(
                List.of(
                    "grown table",
                    "claim p50 ms (ref)",
                    "claim p99 ms (ref)",
                    "claim mean grown / ref",
                    "W1 jobs/s (ref)",
                    "W1 grown / ref",
                    "heap MB",
                    "indexes MB",
                    "job_claim_idx MB",
                    "history MB"),
                rows));
    double worst = claimRatios.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    results.target(
        "claim vs table size",
        "flat (grown / ref ≤ 1.5)",
        Stats.f("worst claim mean ratio %.2f", worst),
        Double.isNaN(worst) ? null : worst <= 1.5,
        "over " + o.sizeFinished() + " finished, " + o.sizeWaiting() + " waiting");
  }

  private void stage(
      String label,
      BenchDatabase ref,
      HikariDataSource refPool,
      BenchDatabase grown,
      HikariDataSource grownPool,
      String grownQueue,
      List<List<String>> rows,
      List<Double> claimRatios)
      throws Exception {
    Measure r = measure(ref, refPool, ThroughputWorkload.QUEUE, false);
    Measure g = measure(grown, grownPool, grownQueue, grownQueue.equals(BACKLOG));
    double claimRatio = g.claimMean / r.claimMean;
    claimRatios.add(claimRatio);
    h.log(
        "size %s: claim p50 %.3f ms (ref %.3f), p99 %.3f ms (ref %.3f); W1 %s jobs/s (ref %s);"
            + " heap %s MB, indexes %s MB, job_claim_idx %s MB, history %s MB",
        label,
        g.claimP50,
        r.claimP50,
        g.claimP99,
        r.claimP99,
        Stats.rate(g.processPerSec),
        Stats.rate(r.processPerSec),
        JobTable.Sample.mb(g.table.heapBytes()),
        JobTable.Sample.mb(g.table.indexBytes()),
        JobTable.Sample.mb(g.table.claimIndexBytes()),
        JobTable.Sample.mb(g.table.historyBytes()));
    rows.add(
        List.of(
            label,
            Stats.f("%.3f", g.claimP50) + Stats.f(" (%.3f)", r.claimP50),
            Stats.f("%.3f", g.claimP99) + Stats.f(" (%.3f)", r.claimP99),
            Stats.f("%.2f", claimRatio),
            Stats.rate(g.processPerSec) + " (" + Stats.rate(r.processPerSec) + ")",
            Stats.f("%.2f", g.processPerSec / r.processPerSec),
            JobTable.Sample.mb(g.table.heapBytes()),
            JobTable.Sample.mb(g.table.indexBytes()),
            JobTable.Sample.mb(g.table.claimIndexBytes()),
            JobTable.Sample.mb(g.table.historyBytes())));
  }

  private Measure measure(BenchDatabase db, HikariDataSource pool, String queue, boolean preloaded)
      throws Exception {
    BenchOptions o = h.options;
    var pgbus = new PgbusSystem();
    if (!preloaded) {
      enqueue(pgbus, pool, queue, o.claimSamples() * CLAIM_BATCH);
    }
    long[] nanos = new long[o.claimSamples()];
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement(CLAIM)) {
      Array queues = c.createArrayOf("text", new Object[] {queue});
      ps.setArray(1, queues);
      for (int i = 0; i < nanos.length; i++) {
        long t0 = System.nanoTime();
        int n = 0;
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            n++;
          }
        }
        nanos[i] = System.nanoTime() - t0;
        if (n == 0) {
          throw new IllegalStateException("claim " + i + " on " + db.name() + " found no job");
        }
      }
      try (PreparedStatement done = c.prepareStatement(CLAIMED_DONE)) {
        done.executeUpdate();
      }
    }
    if (!preloaded) {
      enqueue(pgbus, pool, queue, o.w1Jobs());
    }
    var tracker = new JobTracker();
    long t1 = System.nanoTime();
    try (QueueSystem.Consumers consumers =
        pgbus.start(db, pool, List.of(queue), o.workers(), tracker)) {
      if (!tracker.awaitFinished(o.w1Jobs(), Duration.ofMinutes(10))) {
        throw new IllegalStateException(
            "finished only " + tracker.finished() + " of " + o.w1Jobs() + " jobs");
      }
    }
    double process = o.w1Jobs() / ((tracker.lastFinishedNanos() - t1) / 1e9);
    JobTable.Sample table;
    try (Connection c = pool.getConnection()) {
      table = JobTable.sample(c);
      if (db.name().contains("size_ref")) {
        // The reference stays a small table: only the jobs of the next measurement.
        try (var st = c.createStatement()) {
          st.execute("DELETE FROM pgbus.job");
          st.execute("VACUUM ANALYZE pgbus.job");
        }
      }
    }
    java.util.Arrays.sort(nanos);
    double mean = java.util.Arrays.stream(nanos).average().orElse(Double.NaN) / 1e6;
    return new Measure(
        Stats.percentile(nanos, 50) / 1e6, Stats.percentile(nanos, 99) / 1e6, mean, process, table);
  }

  private static void enqueue(PgbusSystem pgbus, HikariDataSource pool, String queue, int count)
      throws SQLException {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      for (int left = count; left > 0; left -= 1_000) {
        pgbus.enqueueBatch(c, queue, Math.min(left, 1_000));
        c.commit();
      }
      c.setAutoCommit(true);
    }
  }
}

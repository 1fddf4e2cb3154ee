package io.pgbus.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ENQ: enqueue alone, against raw in the same rounds (issue #15, "Enqueue at the raw ceiling"). W1
 * measures enqueue too, but between processing phases that take minutes on a loaded machine; here
 * the five enqueue paths run back to back, in turn, for several rounds, so each ratio is taken over
 * seconds of the same load: raw's single INSERT + pg_notify, pgbus's Java API ({@code
 * Jobs.enqueue}), pgbus's SQL function ({@code SELECT pgbus.enqueue(...)}), each one transaction
 * per job on one connection; then raw's and pgbus's batch (W1's batch size per statement and
 * transaction). Alongside: the server time per enqueue statement (pg_stat_statements) and the CPU
 * per job of the JVM and of PostgreSQL.
 */
final class EnqueueWorkload {

  private static final String QUEUE = ThroughputWorkload.QUEUE;

  private static final String SQL_ENQUEUE = "SELECT pgbus.enqueue(?, ?::jsonb)";

  /** The five paths, in the order of the report. */
  private static final List<String> PATHS =
      List.of(
          "raw single", "pgbus single (Java)", "pgbus single (SQL)", "raw batch", "pgbus batch");

  /** One path in one round: jobs/s, server ms per enqueue statement, CPU µs per job. */
  record Measure(double perSec, double serverMs, double jvmMicros, double serverMicros) {}

  private final Harness h;

  EnqueueWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    var pgbus = new PgbusSystem();
    var raw = new RawSystem(o.rawBatch());
    int rounds = Math.max(3, o.runs() * 2);
    Map<String, List<Measure>> measures = new LinkedHashMap<>();
    PATHS.forEach(p -> measures.put(p, new ArrayList<>()));
    try (BenchDatabase pdb = h.server.createDatabase("enq_pgbus");
        BenchDatabase rdb = h.server.createDatabase("enq_raw")) {
      h.install(pgbus, pdb);
      h.install(raw, rdb);
      try (var pp = pdb.pool("enq-pgbus", 1, 1);
          var rp = rdb.pool("enq-raw", 1, 1);
          Connection pc = pp.getConnection();
          Connection rc = rp.getConnection()) {
        pc.setAutoCommit(false);
        rc.setAutoCommit(false);
        // Unmeasured: the JIT, pgjdbc's server-side prepare (after 5 uses), the plan caches.
        round(pgbus, raw, pdb, rdb, pc, rc, 300, 2, null);
        for (int r = 0; r < rounds; r++) {
          round(pgbus, raw, pdb, rdb, pc, rc, o.singleJobs(), o.w1Jobs() / o.w1Batch(), measures);
          int round = r + 1;
          h.log(
              "ENQ round %d: single raw %s, Java %s, SQL %s jobs/s; batch raw %s, pgbus %s jobs/s",
              round,
              Stats.rate(last(measures, 0).perSec),
              Stats.rate(last(measures, 1).perSec),
              Stats.rate(last(measures, 2).perSec),
              Stats.rate(last(measures, 3).perSec),
              Stats.rate(last(measures, 4).perSec));
        }
      }
    }
    report(results, measures, rounds);
  }

  private static Measure last(Map<String, List<Measure>> m, int path) {
    List<Measure> l = m.get(PATHS.get(path));
    return l.get(l.size() - 1);
  }

  /** One round: every path once; the order rotates with the round so drift hits all alike. */
  private void round(
      PgbusSystem pgbus,
      RawSystem raw,
      BenchDatabase pdb,
      BenchDatabase rdb,
      Connection pc,
      Connection rc,
      int singles,
      int batches,
      Map<String, List<Measure>> out)
      throws Exception {
    int batch = h.options.w1Batch();
    List<Runnable> steps = new ArrayList<>();
    Measure[] m = new Measure[PATHS.size()];
    steps.add(() -> m[0] = timed(rdb, singles, loop(singles, () -> raw.enqueueOne(rc, QUEUE), rc)));
    steps.add(
        () -> m[1] = timed(pdb, singles, loop(singles, () -> pgbus.enqueueOne(pc, QUEUE), pc)));
    steps.add(() -> m[2] = timed(pdb, singles, loop(singles, () -> sqlEnqueue(pc), pc)));
    steps.add(
        () ->
            m[3] =
                timed(
                    rdb,
                    batches * batch,
                    loop(batches, () -> raw.enqueueBatch(rc, QUEUE, batch), rc)));
    steps.add(
        () ->
            m[4] =
                timed(
                    pdb,
                    batches * batch,
                    loop(batches, () -> pgbus.enqueueBatch(pc, QUEUE, batch), pc)));
    int shift = out == null ? 0 : out.get(PATHS.get(0)).size() % steps.size();
    for (int i = 0; i < steps.size(); i++) {
      steps.get((i + shift) % steps.size()).run();
    }
    if (out != null) {
      for (int i = 0; i < m.length; i++) {
        out.get(PATHS.get(i)).add(m[i]);
      }
    }
  }

  private static long sqlEnqueue(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SQL_ENQUEUE)) {
      ps.setString(1, QUEUE);
      ps.setString(2, "{\"n\": 0}");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @FunctionalInterface
  private interface Step {
    Object run() throws Exception;
  }

  @FunctionalInterface
  private interface Body {
    void run() throws Exception;
  }

  /** {@code n} times: the step, then a commit. */
  private static Body loop(int n, Step step, Connection c) {
    return () -> {
      for (int i = 0; i < n; i++) {
        step.run();
        c.commit();
      }
    };
  }

  private Measure timed(BenchDatabase db, int jobs, Body body) {
    try {
      ServerStats.Snapshot before = h.stats.snapshot(db.name());
      CpuMeter.Sample cpu0 = h.cpu.sample();
      long t0 = System.nanoTime();
      body.run();
      double seconds = (System.nanoTime() - t0) / 1e9;
      CpuMeter.Usage cpu = h.cpu.sample().since(cpu0);
      double[] enq = {0, 0};
      h.stats
          .snapshot(db.name())
          .queriesSince(before)
          .forEach(
              (q, v) -> {
                if (StatementKind.of(q) == StatementKind.ENQUEUE || q.contains("pgbus.enqueue(")) {
                  enq[0] += v[0];
                  enq[1] += v[1];
                }
              });
      return new Measure(
          jobs / seconds,
          enq[0] == 0 ? Double.NaN : enq[1] / enq[0],
          cpu.jvmNanos() / 1e3 / jobs,
          cpu.serverNanos() < 0 ? Double.NaN : cpu.serverNanos() / 1e3 / jobs);
    } catch (Exception e) {
      throw new IllegalStateException("ENQ: " + e.getMessage(), e);
    }
  }

  private void report(Results results, Map<String, List<Measure>> m, int rounds) {
    List<Measure> rawSingle = m.get(PATHS.get(0));
    List<Measure> rawBatch = m.get(PATHS.get(3));
    var md = new StringBuilder();
    md.append(
            String.format(
                "%d rounds; in each, the five paths back to back (the order rotates by round);"
                    + " single: %,d jobs, one transaction each, on one connection; batch: %,d"
                    + " jobs, %,d per statement and transaction. The ratio is taken per round"
                    + " against raw's same kind (single or batch), then its median [min–max].",
                rounds, h.options.singleJobs(), h.options.w1Jobs(), h.options.w1Batch()))
        .append("\n\n")
        .append(
            "| ENQ | jobs/s | / raw | server ms per enqueue statement | JVM CPU µs/job |"
                + " PostgreSQL CPU µs/job |\n")
        .append("|---|---|---|---|---|---|\n");
    for (int p = 0; p < PATHS.size(); p++) {
      List<Measure> l = m.get(PATHS.get(p));
      List<Measure> base = p < 3 ? rawSingle : rawBatch;
      double[] rate = l.stream().mapToDouble(Measure::perSec).toArray();
      double[] ratio = new double[l.size()];
      for (int i = 0; i < l.size(); i++) {
        ratio[i] = l.get(i).perSec / base.get(i).perSec;
      }
      md.append("| ")
          .append(PATHS.get(p))
          .append(" | ")
          .append(Stats.spreadRate(rate))
          .append(" | ")
          .append(Stats.spread(ratio, "%.2f"))
          .append(" | ")
          .append(
              Stats.f("%.3f", Stats.median(l.stream().mapToDouble(Measure::serverMs).toArray())))
          .append(" | ")
          .append(
              Stats.f("%.0f", Stats.median(l.stream().mapToDouble(Measure::jvmMicros).toArray())))
          .append(" | ")
          .append(
              Stats.f(
                  "%.0f", Stats.median(l.stream().mapToDouble(Measure::serverMicros).toArray())))
          .append(" |\n");
    }
    results.section("ENQ: enqueue against raw, same rounds", md.toString());
  }
}

package io.pgbus.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * W3: idle cost of one JVM. pgbus with 4 capsules (one queue each) and a delivering listener, and
 * raw with its workers and listener, each in its own database, idle for the window; the statements
 * each database saw come from pg_stat_statements (or, when the server has not preloaded it, from
 * xact_commit).
 */
final class IdleCostWorkload {

  static final List<String> QUEUES = List.of("idle_a", "idle_b", "idle_c", "idle_d");
  static final Duration WARMUP = Duration.ofSeconds(5);

  private final Harness h;
  private final List<IdleWindow> pgbusRuns = new ArrayList<>();
  private final List<IdleWindow> rawRuns = new ArrayList<>();

  IdleCostWorkload(Harness h) {
    this.h = h;
  }

  /** pgbus's windows, which the fleet reuses as its N = 1. */
  List<IdleWindow> pgbusRuns() {
    return pgbusRuns;
  }

  /**
   * Runs every run at once, each in its own pair of databases: idle cost is driven by timers, not
   * by CPU, so runs side by side count the same as runs one after another, in a third of the time.
   */
  void run(Results results) throws Exception {
    QueueSystem pgbus = h.systems.get(0);
    QueueSystem raw = h.systems.get(1);
    int runs = h.options.runs();
    var tracker = new JobTracker();
    var databases = new ArrayList<BenchDatabase>();
    var consumers = new ArrayList<QueueSystem.Consumers>();
    try {
      for (int r = 1; r <= runs; r++) {
        BenchDatabase pdb = h.server.createDatabase("w3_pgbus" + r);
        databases.add(pdb);
        BenchDatabase rdb = h.server.createDatabase("w3_raw" + r);
        databases.add(rdb);
        h.install(pgbus, pdb);
        h.install(raw, rdb);
        // Pools that grow on demand, so the connection count shows what each system used.
        consumers.add(
            pgbus.start(
                pdb,
                pdb.pool("pgbus-pool", Harness.POOL, 0),
                QUEUES,
                h.options.workers(),
                tracker));
        consumers.add(
            raw.start(
                rdb, rdb.pool("raw-pool", Harness.POOL, 0), QUEUES, h.options.workers(), tracker));
      }
      for (QueueSystem.Consumers c : consumers) {
        c.awaitReady(Duration.ofSeconds(30));
      }
      Sleep.millis(WARMUP.toMillis());
      var before = new ArrayList<ServerStats.Snapshot>();
      for (BenchDatabase db : databases) {
        before.add(h.stats.snapshot(db.name()));
      }
      Sleep.millis(h.options.idleSeconds() * 1000L);
      for (int i = 0; i < databases.size(); i++) {
        String name = databases.get(i).name();
        IdleWindow w =
            IdleWindow.between(before.get(i), h.stats.snapshot(name), 1, h.stats.connections(name));
        (i % 2 == 0 ? pgbusRuns : rawRuns).add(w);
      }
      for (int r = 0; r < runs; r++) {
        IdleWindow pw = pgbusRuns.get(r);
        IdleWindow rw = rawRuns.get(r);
        h.log(
            "W3 run %d pgbus %.3f statements/s (%.3f without leader duties), %d connections;"
                + " raw %.3f statements/s, %d connections",
            r + 1,
            pw.total(),
            pw.perEngineWithoutLeader(),
            pw.connectionCount(),
            rw.total(),
            rw.connectionCount());
      }
    } finally {
      consumers.forEach(QueueSystem.Consumers::close);
      for (BenchDatabase db : databases) {
        db.close();
      }
    }
    report(results);
  }

  private void report(Results results) {
    boolean pss = h.server.statements();
    var rows = new ArrayList<List<String>>();
    if (pss) {
      rows.add(row("statements/s, all", IdleWindow::total, "%.3f"));
      rows.add(
          row(
              "statements/s, without the leader's duties",
              IdleWindow::perEngineWithoutLeader,
              "%.3f"));
      var kinds = new TreeSet<StatementKind>();
      pgbusRuns.forEach(w -> kinds.addAll(w.calls().keySet()));
      rawRuns.forEach(w -> kinds.addAll(w.calls().keySet()));
      for (StatementKind k : kinds) {
        rows.add(row("  " + k.label + ", statements/s", w -> w.rate(x -> x == k), "%.3f"));
      }
    }
    if (!pss) {
      // Only as a fallback: before PostgreSQL 15 an idle backend reports its transactions at its
      // next statement, so start-up transactions leak into the window.
      rows.add(row("transactions/s (xact_commit)", IdleWindow::xactsPerSecond, "%.3f"));
    }
    rows.add(row("connections (pg_stat_activity)", w -> (double) w.connectionCount(), "%.0f"));
    rows.add(row("  of which LISTEN", w -> (double) w.listenerConnections(), "%.0f"));
    results.section(
        "W3 idle cost of one JVM",
        String.format(
                Locale.ROOT,
                "pgbus: one engine with %d capsules (one queue each, %d slots), listener delivering,"
                    + " no jobs; being alone, it is also the maintenance leader. raw: %d workers and"
                    + " its listener. Each in its own database, idle for %d s after a %d s warm-up;"
                    + " pools grow on demand. The runs go side by side, each in its own databases"
                    + " (idle cost is driven by timers, not CPU). Counted with %s. Median [min–max]"
                    + " over %d runs.\n\n",
                QUEUES.size(),
                h.options.workers(),
                h.options.workers(),
                h.options.idleSeconds(),
                WARMUP.toSeconds(),
                pss
                    ? "pg_stat_statements (top-level statements)"
                    : "pg_stat_database.xact_commit"
                        + " deltas (pg_stat_statements is not preloaded on this server)",
                pgbusRuns.size())
            + Results.table(List.of("W3", "pgbus", "raw"), rows)
            + "\n"
            + connections()
            + others());
    double perJvm =
        Stats.median(
            values(
                pgbusRuns, pss ? IdleWindow::perEngineWithoutLeader : IdleWindow::xactsPerSecond));
    double all =
        Stats.median(values(pgbusRuns, pss ? IdleWindow::total : IdleWindow::xactsPerSecond));
    results.target(
        "W3 idle cost per JVM",
        "≤ 0.1 statements/s",
        Stats.f("%.3f/s", perJvm)
            + " without the leader's duties; "
            + Stats.f("%.3f/s", all)
            + " as the leader",
        perJvm <= 0.1,
        pss ? "pg_stat_statements" : "xact_commit (pg_stat_statements not preloaded)");
  }

  /** The statements counted as "other" in run 1, so that an idle cost that grew names its cause. */
  private String others() {
    var out = new StringBuilder();
    pgbusRuns.get(0).queries().entrySet().stream()
        .filter(e -> StatementKind.of(e.getKey()) == StatementKind.OTHER && e.getValue()[0] > 0)
        .forEach(
            e ->
                out.append(
                    String.format(
                        Locale.ROOT,
                        "- %.0f × `%s`%n",
                        e.getValue()[0],
                        abbreviated(e.getKey().replaceAll("\\s+", " ").trim()))));
    return out.isEmpty() ? "" : "\npgbus statements counted as other in run 1:\n\n" + out;
  }

  private static String abbreviated(String sql) {
    return sql.length() <= 120 ? sql : sql.substring(0, 117) + "...";
  }

  private String connections() {
    IdleWindow p = pgbusRuns.get(0);
    IdleWindow r = rawRuns.get(0);
    return "Connections by application_name at the end of run 1: pgbus "
        + p.connections()
        + "; raw "
        + r.connections()
        + ".\n";
  }

  private List<String> row(
      String name, java.util.function.ToDoubleFunction<IdleWindow> f, String fmt) {
    return List.of(
        name, Stats.spread(values(pgbusRuns, f), fmt), Stats.spread(values(rawRuns, f), fmt));
  }

  static double[] values(List<IdleWindow> runs, java.util.function.ToDoubleFunction<IdleWindow> f) {
    return runs.stream().mapToDouble(f).toArray();
  }

  /** The busiest statements of a window, for the evidence. */
  static String topQueries(IdleWindow w, int limit) {
    var out = new StringBuilder();
    int i = 0;
    for (Map.Entry<String, double[]> e : w.queries().entrySet()) {
      if (i++ == limit) {
        break;
      }
      out.append(
          String.format(
              Locale.ROOT,
              "%6.0f calls  %s%n",
              e.getValue()[0],
              e.getKey().replaceAll("\\s+", " ").trim()));
    }
    return out.toString();
  }
}

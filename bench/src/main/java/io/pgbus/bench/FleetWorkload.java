package io.pgbus.bench;

import io.pgbus.engine.MaintainerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The fleet: N engines on one database, each with its own pool and its own listener connection as
 * separate JVMs would have, each with the 4 capsules of W3, idle for the window. One of them is the
 * maintenance leader. N = 1 is W3's pgbus side when W3 ran.
 */
final class FleetWorkload {

  /** Pool connections per engine: enough for an idle engine, and 100 engines stay under 450. */
  static final int POOL_PER_ENGINE = 2;

  /** Rescue and retention back off to this many times their interval while idle (Maintainer). */
  static final int MAX_BACKOFF = 10;

  private record Row(int engines, IdleWindow window, String source) {}

  private final Harness h;
  private final List<IdleWindow> single;

  FleetWorkload(Harness h, List<IdleWindow> w3) {
    this.h = h;
    this.single = w3;
  }

  void run(Results results) throws Exception {
    var rows = new ArrayList<Row>();
    var skipped = new ArrayList<String>();
    for (int n : h.options.fleetSizes()) {
      if (n == 1 && !single.isEmpty()) {
        double[] totals = IdleCostWorkload.values(single, IdleWindow::total);
        double median = Stats.median(totals);
        IdleWindow closest = single.get(0);
        for (IdleWindow w : single) {
          if (Math.abs(w.total() - median) < Math.abs(closest.total() - median)) {
            closest = w;
          }
        }
        rows.add(new Row(1, closest, "W3 (its median run)"));
        continue;
      }
      int needed = n * (1 + POOL_PER_ENGINE) + 10;
      if (needed > h.server.maxConnections()) {
        skipped.add(
            "N = "
                + n
                + " skipped: it needs about "
                + needed
                + " connections and the server allows "
                + h.server.maxConnections());
        continue;
      }
      rows.add(new Row(n, once(n), "measured"));
    }
    report(results, rows, skipped);
  }

  private IdleWindow once(int n) throws Exception {
    QueueSystem pgbus = h.systems.get(0);
    var tracker = new JobTracker();
    ExecutorService parallel = Executors.newFixedThreadPool(Math.min(n, 32));
    var engines = new ArrayList<QueueSystem.Consumers>();
    try (BenchDatabase db = h.server.createDatabase("fleet" + n)) {
      h.install(pgbus, db);
      long t0 = System.nanoTime();
      try {
        for (int i = 0; i < n; i++) {
          engines.add(
              pgbus.start(
                  db,
                  db.pool("pgbus-fleet-pool", POOL_PER_ENGINE, 0),
                  IdleCostWorkload.QUEUES,
                  h.options.workers(),
                  tracker));
        }
        for (QueueSystem.Consumers e : engines) {
          e.awaitReady(Duration.ofSeconds(120));
        }
        h.log(
            "fleet N=%d: %d engines delivering after %.1f s", n, n, (System.nanoTime() - t0) / 1e9);
        Sleep.millis(IdleCostWorkload.WARMUP.toMillis());
        ServerStats.Snapshot s0 = h.stats.snapshot(db.name());
        Sleep.millis(h.options.idleSeconds() * 1000L);
        ServerStats.Snapshot s1 = h.stats.snapshot(db.name());
        IdleWindow w = IdleWindow.between(s0, s1, n, h.stats.connections(db.name()));
        long leaders = engines.stream().mapToLong(e -> e.counters().get("leader")).sum();
        h.log(
            "fleet N=%d: %.3f statements/s in all, %.4f per follower JVM, %.4f leader duties, %d"
                + " connections, %d leader(s)",
            n, w.total(), w.perFollower(), w.leaderDuties(), w.connectionCount(), leaders);
        return w;
      } finally {
        var stops = new ArrayList<Future<?>>();
        for (QueueSystem.Consumers e : engines) {
          stops.add(parallel.submit(e::close));
        }
        for (Future<?> f : stops) {
          f.get();
        }
        parallel.shutdown();
      }
    }
  }

  private void report(Results results, List<Row> rows, List<String> skipped) {
    boolean pss = h.server.statements();
    var table = new ArrayList<List<String>>();
    for (Row r : rows) {
      IdleWindow w = r.window;
      table.add(
          List.of(
              Integer.toString(r.engines),
              pss ? Stats.f("%.3f", w.total()) : "n/a",
              pss
                  ? Stats.f("%.4f", w.perFollower())
                  : Stats.f("%.4f (xact)", w.xactsPerSecond() / r.engines),
              pss ? Stats.f("%.4f", w.rate(k -> k == StatementKind.POLL) / r.engines) : "n/a",
              pss ? Stats.f("%.4f", w.rate(k -> k == StatementKind.PROBE) / r.engines) : "n/a",
              pss && r.engines > 1
                  ? Stats.f("%.4f", w.rate(k -> k == StatementKind.ELECTION_READ) / (r.engines - 1))
                  : "n/a",
              pss ? Stats.f("%.3f", w.leaderDuties()) : "n/a",
              w.connectionCount() + " (" + w.listenerConnections() + ")",
              r.source));
    }
    // The leader's steady state once retention has backed off (after about 30 min idle with the
    // defaults): what it measurably pays for the lease, rescue (with its transaction's BEGIN and
    // COMMIT) and schedules, which do not back off (rescue runs at least every third of the
    // heartbeat TTL since issue #14, schedules once per poll ceiling), less the retention measured,
    // plus three retention statements per 10 × 5 min.
    double renew =
        Stats.median(
            rows.stream()
                .mapToDouble(r -> r.window.rate(k -> k == StatementKind.LEADER_RENEW))
                .toArray());
    double backedOff =
        Stats.median(
                rows.stream()
                    .mapToDouble(
                        r -> r.window.leaderDuties() - r.window.rate(k -> k == StatementKind.PRUNE))
                    .toArray())
            + 3.0 / (MAX_BACKOFF * MaintainerConfig.PRUNE_INTERVAL.fallback().toSeconds());
    String text =
        String.format(
                Locale.ROOT,
                "N engines, each with its own pool (grows on demand, at most %d) and its own LISTEN"
                    + " connection, %d capsules each, idle for %d s after a %d s warm-up, all on one"
                    + " database. A follower JVM pays its poll, its self-probe and its candidate"
                    + " reads of the leader lease; the leader's duties (lease renewal, rescue,"
                    + " retention) are paid once by the deployment and shown apart. Counted with"
                    + " %s.\n\n",
                POOL_PER_ENGINE,
                IdleCostWorkload.QUEUES.size(),
                h.options.idleSeconds(),
                IdleCostWorkload.WARMUP.toSeconds(),
                pss ? "pg_stat_statements" : "pg_stat_database.xact_commit")
            + Results.table(
                List.of(
                    "N",
                    "statements/s, all",
                    "per follower JVM",
                    "poll/s per engine",
                    "probe/s per engine",
                    "election reads/s per follower",
                    "leader duties/s",
                    "connections (LISTEN)",
                    "source"),
                table)
            + (skipped.isEmpty() ? "" : "\n" + String.join("; ", skipped) + ".\n")
            + String.format(
                Locale.ROOT,
                "%nIn a %d s window retention has not backed off yet (it reaches 10× its base"
                    + " interval after about 30 min idle); lease renewal (%.4f/s measured), rescue"
                    + " (every third of the heartbeat TTL) and schedules do not back off. The"
                    + " leader's backed-off cost, measured less retention plus retention backed"
                    + " off: **%.4f statements/s** for the whole deployment.%n",
                h.options.idleSeconds(),
                renew,
                backedOff);
    if (pss && !rows.isEmpty()) {
      Row biggest = rows.get(rows.size() - 1);
      text +=
          "\nBusiest statements at N = "
              + biggest.engines
              + " (calls in the window):\n\n```\n"
              + IdleCostWorkload.topQueries(biggest.window, 8)
              + "```\n";
    }
    results.section("Fleet: idle engines on one database", text);
    if (pss && !rows.isEmpty()) {
      double worst =
          rows.stream().mapToDouble(r -> r.window.perFollower()).max().orElse(Double.NaN);
      results.target(
          "Fleet: idle JVM with 4 capsules",
          "≤ 0.1 statements/s, leader's maintenance excluded",
          Stats.f("%.4f/s", worst) + " (worst N)",
          worst <= 0.1,
          "poll + self-probe + candidate election reads");
      results.target(
          "Fleet: backed-off leader",
          "≤ 0.1 statements/s for the deployment",
          Stats.f("%.4f/s", backedOff) + " (measured, retention backed off from defaults)",
          backedOff <= 0.1,
          Stats.f("in the %.0f s window, not yet backed off: ", h.options.idleSeconds())
              + Stats.f(
                  "%.3f/s",
                  Stats.median(rows.stream().mapToDouble(r -> r.window.leaderDuties()).toArray())));
    }
  }
}

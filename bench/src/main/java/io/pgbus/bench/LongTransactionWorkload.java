package io.pgbus.bench;

import java.sql.Connection;
import java.util.List;
import java.util.Locale;

/**
 * A long transaction elsewhere: W4's steady load on pgbus with default settings, while another
 * connection to the same database opens a REPEATABLE READ transaction, takes its snapshot, holds it
 * for {@code xminHoldSeconds}, then commits. Before, during and after, window by window: what the
 * old snapshot does to claims, latency and the job table (docs/performance.md).
 */
final class LongTransactionWorkload {

  private final Harness h;

  LongTransactionWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    int window = Math.max(5, Math.min(60, o.xminHoldSeconds() / 10));
    try (BenchDatabase db = h.server.createDatabase("xmin");
        Connection report = db.connect("nightly-report")) {
      List<LoadTimeline.Window> windows =
          new LoadTimeline(h, o.w4Rate(), window)
              .run(
                  db,
                  List.of(
                      new LoadTimeline.Phase("before", o.xminPhaseSeconds(), null),
                      new LoadTimeline.Phase(
                          "held",
                          o.xminHoldSeconds(),
                          () -> {
                            report.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                            report.setAutoCommit(false);
                            try (var st = report.createStatement()) {
                              st.execute("SELECT count(*) FROM pgbus.queue_pause"); // the snapshot
                            }
                          }),
                      new LoadTimeline.Phase("after", o.xminPhaseSeconds(), report::commit)));
      String summary =
          Results.table(
              List.of(
                  "phase", "done/s", "p50 ms", "p99 ms", "claim ms (mean)", "dead tuples (end)"),
              List.of("before", "held", "after").stream()
                  .map(
                      p ->
                          List.of(
                              p,
                              Stats.f("%.0f", LoadTimeline.mean(windows, p, w -> w.donePerSec())),
                              Stats.f("%.2f", LoadTimeline.mean(windows, p, w -> w.p50Ms())),
                              Stats.f("%.2f", LoadTimeline.mean(windows, p, w -> w.p99Ms())),
                              Stats.f("%.3f", LoadTimeline.mean(windows, p, w -> w.claimMeanMs())),
                              String.format(
                                  Locale.ROOT,
                                  "%,d",
                                  windows.stream()
                                      .filter(w -> w.phase().equals(p))
                                      .reduce((a, b) -> b)
                                      .map(w -> w.table().deadTuples())
                                      .orElse(0L))))
                  .toList());
      results.section(
          "A long transaction elsewhere",
          String.format(
                  Locale.ROOT,
                  "%,d jobs/s offered (W4's producer) to pgbus with default settings. After %d s,"
                      + " another connection to the database opens a REPEATABLE READ transaction,"
                      + " takes its snapshot and holds it %d s, then commits; the load goes on %d"
                      + " s more. Means of the windows of each phase, then every %d-s window.%n%n",
                  o.w4Rate(),
                  o.xminPhaseSeconds(),
                  o.xminHoldSeconds(),
                  o.xminPhaseSeconds(),
                  window)
              + summary
              + "\n"
              + LoadTimeline.table(windows));
      double before = LoadTimeline.mean(windows, "before", w -> w.claimMeanMs());
      double held = LoadTimeline.mean(windows, "held", w -> w.claimMeanMs());
      double after = LoadTimeline.mean(windows, "after", w -> w.claimMeanMs());
      results.target(
          "claim under a " + o.xminHoldSeconds() + "-s snapshot",
          "recovers after the commit",
          Stats.f("claim mean %.3f ms before, ", before)
              + Stats.f("%.3f held, ", held)
              + Stats.f("%.3f after", after),
          after <= 2 * before,
          "window means; the machine is shared");
    }
  }
}

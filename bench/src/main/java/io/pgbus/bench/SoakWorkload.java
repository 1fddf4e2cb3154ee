package io.pgbus.bench;

import java.util.List;
import java.util.Locale;

/**
 * Soak: W4's steady load on pgbus with default settings for {@code soakMinutes}, read minute by
 * minute (latency, sizes, dead tuples, autovacuum runs, connections, JVM threads). Everything
 * should stay flat; the table says whether it did.
 */
final class SoakWorkload {

  private final Harness h;

  SoakWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    try (BenchDatabase db = h.server.createDatabase("soak")) {
      List<LoadTimeline.Window> windows =
          new LoadTimeline(h, o.w4Rate(), 60)
              .run(db, List.of(new LoadTimeline.Phase("soak", o.soakMinutes() * 60, null)));
      results.section(
          "Soak",
          String.format(
                  Locale.ROOT,
                  "%,d jobs/s offered (W4's producer) to pgbus with default settings (retention"
                      + " of completed jobs 1 day, so the table grows by design) for %d min;"
                      + " one row per minute.%n%n",
                  o.w4Rate(),
                  o.soakMinutes())
              + LoadTimeline.table(windows));
      double first = windows.get(0).p99Ms();
      double last = windows.get(windows.size() - 1).p99Ms();
      results.target(
          "soak " + o.soakMinutes() + " min",
          "flat p99",
          Stats.f("p99 %.2f ms in the first minute, ", first) + Stats.f("%.2f in the last", last),
          last <= Math.max(2 * first, first + 5),
          "the machine is shared");
    }
  }
}

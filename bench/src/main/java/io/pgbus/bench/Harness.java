package io.pgbus.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** What every workload shares: the server, its counters, the CPU meter, the two systems. */
final class Harness {

  /**
   * Pool size for both systems in the load workloads: 8 job slots plus claim, poll, maintenance.
   */
  static final int POOL = 16;

  final BenchServer server;
  final BenchOptions options;
  final ServerStats stats;
  final CpuMeter cpu;
  final List<QueueSystem> systems;
  private final long startedNanos = System.nanoTime();

  Harness(BenchServer server, BenchOptions options) {
    this.server = server;
    this.options = options;
    this.stats = new ServerStats(server);
    this.cpu = CpuMeter.of(server);
    this.systems = List.of(new PgbusSystem(), new RawSystem(options.rawBatch()));
  }

  /** The systems in the order of run {@code run}: alternating, so drift hits both alike. */
  List<QueueSystem> order(int run) {
    return run % 2 == 0 ? systems : List.of(systems.get(1), systems.get(0));
  }

  /** One run of a workload on one system. */
  @FunctionalInterface
  interface RunOnce<R> {
    R run(QueueSystem system, int run) throws Exception;
  }

  /**
   * Runs a workload {@code options.runs()} times on every system, alternating which goes first, and
   * returns each system's runs by name.
   */
  <R> Map<String, List<R>> eachRun(RunOnce<R> once) throws Exception {
    Map<String, List<R>> runs = new LinkedHashMap<>();
    systems.forEach(s -> runs.put(s.name(), new ArrayList<>()));
    for (int r = 0; r < options.runs(); r++) {
      for (QueueSystem s : order(r)) {
        runs.get(s.name()).add(once.run(s, r + 1));
      }
    }
    return runs;
  }

  /** Installs the schema through a pool that is closed at once, so it leaves no connection. */
  void install(QueueSystem system, BenchDatabase db) throws Exception {
    try (var ds = db.pool("bench-install", 4, 0)) {
      system.install(ds);
    }
  }

  void log(String fmt, Object... args) {
    long s = Duration.ofNanos(System.nanoTime() - startedNanos).toSeconds();
    System.out.printf(
        Locale.ROOT,
        "[bench %02d:%02d] %s%n",
        s / 60,
        s % 60,
        String.format(Locale.ROOT, fmt, args));
  }

  static String now() {
    return Instant.now().toString();
  }
}

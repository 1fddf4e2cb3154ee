package io.pgbus.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs the bench: starts (or connects to) PostgreSQL, runs each selected workload on both systems,
 * prints the results as markdown and writes them to {@code --results} (bench/target/results.md).
 * See docs/performance.md.
 */
public final class Bench {

  // Held, so the level set on them is not lost to garbage collection.
  private static final List<Logger> QUIET =
      List.of(
          Logger.getLogger("io.pgbus"),
          Logger.getLogger("org.flywaydb"),
          Logger.getLogger("com.zaxxer"),
          Logger.getLogger("io.zonky"));

  private Bench() {}

  public static void main(String[] args) throws Exception {
    if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
      System.out.println(BenchOptions.USAGE);
      return;
    }
    BenchOptions options;
    try {
      options = BenchOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    // HikariCP pings a connection that sat idle for over 500 ms before lending it out: a round
    // trip neither system asked for, which a Liberty pool does not make. Off for the bench.
    System.setProperty("com.zaxxer.hikari.aliveBypassWindowMs", Long.toString(24 * 3600 * 1000L));
    // An engine logs its start, its listener and its leadership at INFO; 100 engines would bury
    // the bench's own output. Warnings still show.
    QUIET.forEach(l -> l.setLevel(Level.WARNING));
    long t0 = System.nanoTime();
    double loadBefore = CpuMeter.loadAverage();
    try (BenchServer server = BenchServer.start(options)) {
      var h = new Harness(server, options);
      h.log(
          "PostgreSQL %s (%s; %s); pg_stat_statements %s",
          server.version(),
          server.source(),
          server.settings(),
          server.statements() ? "on" : "not preloaded: idle cost falls back to xact_commit");
      var results = new Results();
      CpuMeter.Sample cpu0 = h.cpu.sample();
      // W5's consumers are the demo server's: it warms them up itself.
      if (!Set.of("w5", "admin", "enq", "conc-liberty", "crypt", "fair")
              .containsAll(options.workloads())
          && options.workloads().stream().noneMatch(BenchOptions.OPT_IN::contains)) {
        h.log("warm-up (unmeasured) ...");
        new ThroughputWorkload(h).warmUp();
      }
      WakeLatencyWorkload w2 = new WakeLatencyWorkload(h);
      IdleCostWorkload w3 = new IdleCostWorkload(h);
      for (String w : options.workloads()) {
        h.log("%s ...", w.toUpperCase(Locale.ROOT));
        switch (w) {
          case "w1" -> new ThroughputWorkload(h).run(results);
          case "pooler" -> new PoolerWorkload(h).run(results);
          case "w2" -> w2.run(results);
          case "w3" -> w3.run(results);
          case "fleet" -> new FleetWorkload(h, w3.pgbusRuns()).run(results);
          case "w4" -> new SustainedLoadWorkload(h).run(results);
          case "w5" -> new LibertyWakeLatencyWorkload(h, w2.pgbusRuns()).run(results);
          case "admin" -> new AdminQueryWorkload(h).run(results);
          case "enq" -> new EnqueueWorkload(h).run(results);
          case "concurrent-enqueue" -> new ConcurrentEnqueueWorkload(h).run(results);
          case "conc-liberty" -> new LibertyConcurrentEnqueueWorkload(h).run(results);
          case "size" -> new TableSizeWorkload(h).run(results);
          case "xmin" -> new LongTransactionWorkload(h).run(results);
          case "queues" -> new ManyQueuesWorkload(h).run(results);
          case "soak" -> new SoakWorkload(h).run(results);
          case "crypt" -> new CryptWorkload(h).run(results);
          case "fair" -> new FairWorkload(h).run(results);
          case "partitions" -> new PartitionWorkload(h).run(results);
          case "upgrade" -> new UpgradeWorkload(h).run(results);
          default -> throw new IllegalStateException(w);
        }
      }
      CpuMeter.Usage all = h.cpu.sample().since(cpu0);
      double minutes = (System.nanoTime() - t0) / 60e9;
      environment(results, server, options, loadBefore, all, minutes);
      String md = results.markdown();
      System.out.println();
      System.out.println(md);
      results.write(options.results());
      h.log("results written to %s (%.1f min)", options.results().toAbsolutePath(), minutes);
    }
  }

  private static void environment(
      Results r,
      BenchServer server,
      BenchOptions o,
      double loadBefore,
      CpuMeter.Usage all,
      double minutes) {
    r.environment("date: " + Harness.now());
    r.environment(
        "machine: "
            + cpuModel()
            + ", "
            + Runtime.getRuntime().availableProcessors()
            + " cores, "
            + memory()
            + "; "
            + System.getProperty("os.name")
            + " "
            + System.getProperty("os.version"));
    r.environment(
        "Java "
            + System.getProperty("java.version")
            + " ("
            + System.getProperty("java.vm.name")
            + "), heap "
            + ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax() / (1 << 20)
            + " MB max");
    r.environment(
        "PostgreSQL "
            + server.version()
            + " ("
            + server.source()
            + "; "
            + server.settings()
            + ")"
            + "; idle statements counted with "
            + (server.statements()
                ? "pg_stat_statements"
                : "xact_commit (pg_stat_statements not preloaded)"));
    r.environment(
        "options: "
            + (o.quick() ? "--quick, " : "")
            + o.runs()
            + " run(s), workloads "
            + o.workloads()
            + ", "
            + o.workers()
            + " consumer slots per system, raw claims LIMIT "
            + o.rawBatch()
            + ", pools of "
            + Harness.POOL
            + " (HikariCP)");
    // The server's share is measured per phase (each section): over the whole run most of its
    // backends have exited with their databases, and an exited process's CPU time is gone.
    r.environment(
        String.format(
            Locale.ROOT,
            "load: 1-min load average %.2f at start, %.2f at end; over the run the machine had %s"
                + " of %d cores busy on average, %.2f of them this JVM (per-phase shares of the"
                + " JVM, PostgreSQL and everything else are in the sections)",
            loadBefore,
            CpuMeter.loadAverage(),
            all.machine() < 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", all.machine()),
            Runtime.getRuntime().availableProcessors(),
            all.jvm()));
    r.environment(String.format(Locale.ROOT, "bench run time: %.1f min", minutes));
  }

  private static String cpuModel() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
          .filter(l -> l.startsWith("model name"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim())
          .findFirst()
          .orElse("unknown CPU");
    } catch (Exception e) {
      return "unknown CPU";
    }
  }

  private static String memory() {
    try {
      return Files.readAllLines(Path.of("/proc/meminfo")).stream()
          .filter(l -> l.startsWith("MemTotal"))
          .map(l -> Long.parseLong(l.replaceAll("\\D", "")) / (1024 * 1024) + " GiB RAM")
          .findFirst()
          .orElse("");
    } catch (Exception e) {
      return "";
    }
  }
}

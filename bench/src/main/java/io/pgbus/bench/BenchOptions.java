package io.pgbus.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What one bench run does, parsed once from the command line. Every size has a full value and a
 * {@code --quick} value; any of them can be overridden on its own.
 *
 * @param url an admin JDBC URL to an existing server, or null to start an embedded one
 * @param runs how many times each workload runs (medians and spreads need at least 3)
 * @param workloads which workloads run, in the order they are listed in {@link #ALL}
 * @param w1Jobs W1: jobs batch-enqueued and then processed
 * @param w1Batch W1: jobs per enqueue statement (and transaction)
 * @param singleJobs W1: jobs enqueued one transaction each
 * @param w2Jobs W2: jobs enqueued one at a time at idle
 * @param w2IntervalMs W2: time between two enqueues
 * @param idleSeconds W3 and fleet: the measured idle window
 * @param fleetSizes fleet: engine counts
 * @param w4Rate W4: jobs per second offered
 * @param w4Seconds W4: how long the load lasts
 * @param w4TickMs W4: the producer commits what is due every tick (one transaction per tick)
 * @param workers consumer slots of each system (pgbus capsule concurrency, raw worker threads)
 * @param rawBatch raw: LIMIT k of each raw claim
 * @param jobsPerTransaction W1 also runs pgbus with this fixed jobs-per-transaction, 1 being the
 *     default before {@code auto} (0: not at all)
 * @param synchronousCommit null to keep the server's setting, else set on every bench database
 * @param libertyDb W5: a JDBC URL to the running demo server's database, or null to skip W5
 * @param libertyHttp W5: the demo server's HTTP root, whose /health/ready is awaited; or null
 * @param results where the markdown results go
 * @param sizeFinished size: the finished jobs kept in the grown table at each stage, ascending
 * @param sizeWaiting size: the jobs waiting in one queue at the last stage (0: skipped)
 * @param claimSamples size and queues: claims timed per measurement
 * @param xminHoldSeconds xmin: how long the REPEATABLE READ transaction stays open
 * @param xminPhaseSeconds xmin: the load before the transaction opens and after it commits
 * @param queueCounts queues: the queue counts compared (a tenth of each is busy)
 * @param soakMinutes soak: how long the load lasts
 * @param concWriters concurrent-enqueue: the numbers of concurrent writers compared
 * @param concSeconds concurrent-enqueue: how long each (writers, variant) cell runs
 * @param commitDelayMicros 0, or PostgreSQL's {@code commit_delay} on every bench database: the
 *     leader of a group commit waits this long before its WAL flush, while the transactions that
 *     notified hold the notification lock: a slow flush, where a device-mapper delay is not at hand
 * @param partitionDayJobs partitions: the finished jobs of each of the 7 days (Oban's shape: 1M)
 * @param adminHistory admin: finished jobs added to the history over the 7 days before the table's
 *     day (issue #27's 10M history rows), 0 for none
 * @param upgradeFinished upgrade: the previous release's finished jobs (a tenth as many wait)
 * @param upgradeRate upgrade: jobs per second of the previous release's SQL during the upgrade
 */
record BenchOptions(
    boolean quick,
    String url,
    int runs,
    Set<String> workloads,
    int w1Jobs,
    int w1Batch,
    int singleJobs,
    int w2Jobs,
    int w2IntervalMs,
    int idleSeconds,
    List<Integer> fleetSizes,
    int w4Rate,
    int w4Seconds,
    int w4TickMs,
    int workers,
    int rawBatch,
    int jobsPerTransaction,
    String synchronousCommit,
    String libertyDb,
    String libertyHttp,
    Path results,
    int adminJobs,
    List<Integer> sizeFinished,
    int sizeWaiting,
    int claimSamples,
    int xminHoldSeconds,
    int xminPhaseSeconds,
    List<Integer> queueCounts,
    int soakMinutes,
    List<Integer> concWriters,
    int concSeconds,
    int commitDelayMicros,
    int partitionDayJobs,
    int adminHistory,
    int upgradeFinished,
    int upgradeRate) {

  // W5 comes after W2, so its report can set the Java SE figures of the same run beside it.
  static final List<String> ALL =
      List.of("w1", "w2", "w3", "fleet", "w4", "w5", "admin", "enq", "concurrent-enqueue");

  /**
   * Workloads that run only when named in --only: each grows or holds a database for many minutes
   * (docs/performance.md "As the work grows").
   */
  static final List<String> OPT_IN =
      List.of(
          "size",
          "xmin",
          "queues",
          "soak",
          "conc-liberty",
          "crypt",
          "pooler",
          "partitions",
          "fair",
          "upgrade");

  static final String USAGE =
      """
      usage: ./run-bench [--with-demo] [--quick] [--url=JDBC_URL] [--runs=N]
                         [--only=w1,w2,w3,fleet,w4,w5,admin,enq,concurrent-enqueue,
                                 size,xmin,queues,soak,conc-liberty,crypt,pooler,partitions,fair,
                                 upgrade]
                         [--partition-day-jobs=N] [--upgrade-finished=N] [--upgrade-rate=N]
                         [--conc-writers=1,8,32,64] [--conc-seconds=N] [--admin-jobs=N] [--admin-history=N] [--size-finished=0,1000000,10000000]
                         [--size-waiting=N] [--claim-samples=N] [--xmin-hold-seconds=N]
                         [--xmin-phase-seconds=N] [--queues=10,1000] [--soak-minutes=N]
                         [--w1-jobs=N] [--w1-batch=N] [--single-jobs=N] [--w2-jobs=N]
                         [--idle-seconds=N] [--fleet=1,10,100] [--w4-rate=N] [--w4-seconds=N]
                         [--workers=N] [--raw-batch=K] [--jobs-per-transaction=N]
                         [--synchronous-commit=on|off] [--commit-delay=MICROSECONDS]
                         [--liberty-db=JDBC_URL] [--liberty-http=URL] [--results=PATH]
        --url   an admin JDBC URL (may create and drop databases), e.g.
                jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres;
                without it the bench starts an embedded PostgreSQL with pg_stat_statements
        --quick a smoke run of a minute or two: one run of each workload, smaller sizes
        --only  size, xmin, queues, soak and pooler run only when named here (they take many
                minutes: a 10M-row table, a transaction held 10 minutes, a 30-minute load)
        --liberty-db    W5: the JDBC URL of a running demo server's database (./run-demo), e.g.
                        jdbc:postgresql://127.0.0.1:15432/pgbus?user=postgres; without it W5 is
                        skipped
        --liberty-http  W5: the demo server's HTTP root (e.g. http://127.0.0.1:9080); W5 waits
                        for its /health/ready to be UP
        --with-demo     (./run-bench itself) starts ./run-demo, runs W2 and W5 against it on
                        the demo's PostgreSQL, and stops it; --with-demo --only=conc-liberty
                        runs CONC through JTA on Liberty (--conc-writers, --conc-seconds)
      """;

  static BenchOptions parse(String[] raw) {
    var args = new ArrayList<String>();
    for (String a : raw) {
      // Maven passes -Dbench.args as one argument; split it here.
      for (String part : a.trim().split("\\s+")) {
        if (!part.isEmpty()) {
          args.add(part);
        }
      }
    }
    boolean quick = args.contains("--quick");
    String url = null;
    int runs = quick ? 1 : 3;
    Set<String> workloads = new LinkedHashSet<>(ALL);
    int w1Jobs = quick ? 5_000 : 20_000;
    int w1Batch = 1_000;
    int singleJobs = quick ? 300 : 1_000;
    int w2Jobs = quick ? 100 : 300;
    int w2IntervalMs = 50;
    int idleSeconds = quick ? 15 : 60;
    List<Integer> fleet = quick ? List.of(1, 10) : List.of(1, 10, 100);
    int w4Rate = 1_000;
    int w4Seconds = quick ? 15 : 60;
    int w4TickMs = 10;
    int workers = 8;
    int rawBatch = 10;
    int jobsPerTransaction = 10;
    String syncCommit = null;
    int commitDelay = 0;
    String libertyDb = null;
    String libertyHttp = null;
    Path results = Path.of("target", "results.md");
    int adminJobs = quick ? 100_000 : 1_000_000;
    List<Integer> sizeFinished = quick ? List.of(0, 100_000) : List.of(0, 1_000_000, 10_000_000);
    int sizeWaiting = quick ? 100_000 : 1_000_000;
    int claimSamples = quick ? 200 : 1_000;
    int xminHold = quick ? 30 : 600;
    int xminPhase = quick ? 15 : 120;
    List<Integer> queueCounts = List.of(10, 1_000);
    int soakMinutes = quick ? 2 : 30;
    List<Integer> concWriters = quick ? List.of(1, 8, 32) : List.of(1, 8, 32, 64);
    int concSeconds = quick ? 2 : 5;
    int partitionDayJobs = quick ? 50_000 : 1_000_000;
    int adminHistory = 0;
    int upgradeFinished = quick ? 100_000 : 1_000_000;
    int upgradeRate = 500;
    for (String a : args) {
      String key = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
      String value = a.contains("=") ? a.substring(a.indexOf('=') + 1) : null;
      switch (key) {
        case "--quick" -> {}
        case "--help", "-h" -> throw new IllegalArgumentException(USAGE);
        case "--url" -> url = require(key, value);
        case "--runs" -> runs = positive(key, value);
        case "--only" -> {
          workloads = new LinkedHashSet<>();
          for (String w : require(key, value).toLowerCase(Locale.ROOT).split(",")) {
            if (!ALL.contains(w) && !OPT_IN.contains(w)) {
              throw new IllegalArgumentException(
                  "--only: unknown workload '" + w + "'; use " + ALL + " or " + OPT_IN);
            }
            workloads.add(w);
          }
          var ordered = new LinkedHashSet<String>();
          for (String w : java.util.stream.Stream.concat(ALL.stream(), OPT_IN.stream()).toList()) {
            if (workloads.contains(w)) {
              ordered.add(w);
            }
          }
          workloads = ordered;
        }
        case "--w1-jobs" -> w1Jobs = positive(key, value);
        case "--w1-batch" -> w1Batch = positive(key, value);
        case "--single-jobs" -> singleJobs = positive(key, value);
        case "--w2-jobs" -> w2Jobs = positive(key, value);
        case "--w2-interval-ms" -> w2IntervalMs = positive(key, value);
        case "--idle-seconds" -> idleSeconds = positive(key, value);
        case "--fleet" -> {
          var sizes = new ArrayList<Integer>();
          for (String s : require(key, value).split(",")) {
            sizes.add(positive(key, s));
          }
          fleet = List.copyOf(sizes);
        }
        case "--w4-rate" -> w4Rate = positive(key, value);
        case "--w4-seconds" -> w4Seconds = positive(key, value);
        case "--w4-tick-ms" -> w4TickMs = positive(key, value);
        case "--workers" -> workers = positive(key, value);
        case "--raw-batch" -> rawBatch = positive(key, value);
        case "--jobs-per-transaction" ->
            jobsPerTransaction = "0".equals(value) ? 0 : positive(key, value);
        case "--synchronous-commit" -> {
          syncCommit = require(key, value).toLowerCase(Locale.ROOT);
          if (!List.of("on", "off", "local", "remote_write", "remote_apply").contains(syncCommit)) {
            throw new IllegalArgumentException("--synchronous-commit: not a setting: " + value);
          }
        }
        case "--commit-delay" -> {
          commitDelay = "0".equals(value) ? 0 : positive(key, value);
          if (commitDelay > 100_000) {
            throw new IllegalArgumentException(
                "--commit-delay: " + value + " is out of PostgreSQL's range 0..100000 (µs)");
          }
        }
        case "--liberty-db" -> libertyDb = require(key, value);
        case "--liberty-http" -> libertyHttp = require(key, value).replaceAll("/+$", "");
        case "--results" -> results = Path.of(require(key, value));
        case "--admin-jobs" -> adminJobs = positive(key, value);
        case "--size-finished" -> {
          var sizes = new ArrayList<Integer>();
          for (String v : require(key, value).split(",")) {
            int n = "0".equals(v.strip()) ? 0 : positive(key, v.strip());
            if (!sizes.isEmpty() && n <= sizes.get(sizes.size() - 1)) {
              throw new IllegalArgumentException(key + " must ascend, was " + value);
            }
            sizes.add(n);
          }
          sizeFinished = List.copyOf(sizes);
        }
        case "--size-waiting" -> sizeWaiting = "0".equals(value) ? 0 : positive(key, value);
        case "--claim-samples" -> claimSamples = positive(key, value);
        case "--xmin-hold-seconds" -> xminHold = positive(key, value);
        case "--xmin-phase-seconds" -> xminPhase = positive(key, value);
        case "--queues" -> {
          var counts = new ArrayList<Integer>();
          for (String v : require(key, value).split(",")) {
            int n = positive(key, v.strip());
            if (n < 10 || n > 10_000) {
              throw new IllegalArgumentException(key + ": each count must be 10..10000, was " + n);
            }
            counts.add(n);
          }
          queueCounts = List.copyOf(counts);
        }
        case "--soak-minutes" -> soakMinutes = positive(key, value);
        case "--conc-writers" -> {
          var counts = new ArrayList<Integer>();
          for (String v : require(key, value).split(",")) {
            int n = positive(key, v.strip());
            if (n > 200) {
              throw new IllegalArgumentException(key + ": each count must be 1..200, was " + n);
            }
            counts.add(n);
          }
          concWriters = List.copyOf(counts);
        }
        case "--conc-seconds" -> concSeconds = positive(key, value);
        case "--partition-day-jobs" -> partitionDayJobs = positive(key, value);
        case "--admin-history" -> adminHistory = positive(key, value);
        case "--upgrade-finished" -> upgradeFinished = positive(key, value);
        case "--upgrade-rate" -> upgradeRate = positive(key, value);
        default -> throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
      }
    }
    if (libertyDb == null && workloads.equals(Set.of("w5"))) {
      throw new IllegalArgumentException(
          "--only=w5 needs --liberty-db=JDBC_URL of a running demo server, or ./run-bench --with-demo");
    }
    if (libertyDb != null && !libertyDb.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("--liberty-db: not a jdbc:postgresql: URL: " + libertyDb);
    }
    return new BenchOptions(
        quick,
        url,
        runs,
        workloads,
        w1Jobs,
        w1Batch,
        singleJobs,
        w2Jobs,
        w2IntervalMs,
        idleSeconds,
        fleet,
        w4Rate,
        w4Seconds,
        w4TickMs,
        workers,
        rawBatch,
        jobsPerTransaction,
        syncCommit,
        libertyDb,
        libertyHttp,
        results,
        adminJobs,
        sizeFinished,
        sizeWaiting,
        claimSamples,
        xminHold,
        xminPhase,
        queueCounts,
        soakMinutes,
        concWriters,
        concSeconds,
        commitDelay,
        partitionDayJobs,
        adminHistory,
        upgradeFinished,
        upgradeRate);
  }

  boolean runs(String workload) {
    return workloads.contains(workload);
  }

  private static String require(String key, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(key + " needs a value: " + key + "=...");
    }
    return value;
  }

  private static int positive(String key, String value) {
    try {
      int v = Integer.parseInt(require(key, value));
      if (v < 1) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a positive integer, was '" + value + "'");
    }
  }
}

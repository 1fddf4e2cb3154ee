package io.pgbus.bench;

import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.WakeMode;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * CONC: a business transaction with and without one enqueue, at several concurrent writers (issue
 * #26). PostgreSQL takes one instance-wide lock at the commit of every transaction that called
 * {@code NOTIFY} and holds it through the commit's WAL flush, so a single writer never meets it and
 * many writers queue on it: the other workloads, all on one enqueuing connection, cannot show it.
 *
 * <p>Each writer, on its own pooled connection, repeats {@code BEGIN; INSERT INTO bench_order ...;
 * <second write>; COMMIT} for a fixed time. The second write is, per variant: a plain row (the
 * baseline), {@code SELECT pgbus.enqueue(...)} (SQL: with the default coalesced wake, and with
 * {@code pgbus.setting.wake_mode = 'in_transaction'}, a NOTIFY at every commit as in 0.1.0), {@code
 * pgbus.enqueue} into a paused queue (pgbus sends no NOTIFY for a paused queue: the no-NOTIFY
 * baseline of the same insert), raw's INSERT + {@code pg_notify}, and the Java API ({@code
 * engine.jobs().enqueue} inside {@code engine.transactions()}, a started Java SE engine without
 * capsules) in {@code pgbus.wake-mode=coalesced} (the wake after the commit, through the engine's
 * coalescing sender), in {@code in-transaction} (NOTIFY inside the transaction), and into a paused
 * queue (the Java no-NOTIFY baseline). No consumer runs. Variants run back to back per writer
 * count, the order rotating by run, all in one database; the ratio is taken per run, then its
 * median.
 *
 * <p>Then commit → handler start at low load: one writer commits a job every 5 ms for a consumer
 * engine that idles; from another engine in each wake mode, and from the consumer's own engine (the
 * in-process wake).
 */
final class ConcurrentEnqueueWorkload {

  private static final String QUEUE = "conc";
  private static final String PAUSED_QUEUE = "conc_paused";

  static final String JAVA_COALESCED = "pgbus Java, coalesced";
  static final String JAVA_IN_TX = "pgbus Java, in-transaction";
  static final String JAVA_PAUSED = "pgbus Java, queue paused";

  /**
   * pgbus SQL with pgbus.setting.wake_mode = 'in_transaction': a NOTIFY at every commit (0.1.0).
   */
  static final String IN_TRANSACTION = "pgbus SQL, in-transaction wake";

  static final List<String> VARIANTS =
      List.of(
          "plain row",
          "pgbus SQL",
          IN_TRANSACTION,
          "pgbus SQL, queue paused",
          JAVA_COALESCED,
          JAVA_IN_TX,
          JAVA_PAUSED,
          "raw + pg_notify");

  /** The Java SE engines of the Java variants, by wake mode; no capsules. */
  private final Map<WakeMode, Engine> producers = new EnumMap<>(WakeMode.class);

  /** One cell: commits per second and commit latency percentiles (the whole transaction), ms. */
  record Cell(double perSec, double p50Ms, double p99Ms) {}

  private final Harness h;

  ConcurrentEnqueueWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    List<Integer> writers = o.concWriters();
    int maxWriters = writers.stream().mapToInt(Integer::intValue).max().orElse(1);
    var pgbus = new PgbusSystem();
    var raw = new RawSystem(o.rawBatch());
    // cells[writers][variant] = one Cell per run
    Map<Integer, Map<String, List<Cell>>> cells = new LinkedHashMap<>();
    try (BenchDatabase db = h.server.createDatabase("conc")) {
      h.install(pgbus, db);
      h.install(raw, db);
      // One connection per writer, one for the set-up, one for each engine's sender.
      try (var pool = db.pool("conc-writers", maxWriters + 3, maxWriters + 3)) {
        try (Connection c = pool.getConnection();
            Statement s = c.createStatement()) {
          s.execute(
              "CREATE TABLE bench_order (id bigserial PRIMARY KEY, customer int NOT NULL,"
                  + " total numeric(12,2) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
          s.execute(
              "CREATE TABLE bench_order_line (id bigserial PRIMARY KEY, order_id bigint NOT NULL,"
                  + " sku text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
          s.execute("SELECT pgbus.pause('" + PAUSED_QUEUE + "', 'bench')");
        }
        for (WakeMode mode : WakeMode.values()) {
          Engine e =
              Engine.builder(
                      EngineConfig.builder()
                          .workerId("conc-" + mode.name().toLowerCase(java.util.Locale.ROOT))
                          .wakeMode(mode)
                          .build(),
                      pool)
                  .maintenance(false)
                  .build();
          e.start();
          producers.put(mode, e);
        }
        // Unmeasured: the JIT, pgjdbc's server-side prepares, the plan caches, on every variant.
        for (String v : VARIANTS) {
          cell(pool, pgbus, raw, v, Math.min(8, maxWriters), 1);
        }
        for (int w : writers) {
          Map<String, List<Cell>> byVariant = new LinkedHashMap<>();
          VARIANTS.forEach(v -> byVariant.put(v, new ArrayList<>()));
          cells.put(w, byVariant);
        }
        for (int r = 0; r < o.runs(); r++) {
          for (int w : writers) {
            for (int i = 0; i < VARIANTS.size(); i++) {
              String v = VARIANTS.get((i + r) % VARIANTS.size());
              Cell cell = cell(pool, pgbus, raw, v, w, o.concSeconds());
              cells.get(w).get(v).add(cell);
              h.log(
                  "CONC run %d, %d writer(s), %s: %s commits/s, p50 %.2f ms, p99 %.2f ms",
                  r + 1, w, v, Stats.rate(cell.perSec), cell.p50Ms, cell.p99Ms);
            }
          }
        }
      }
    }
    producers.values().forEach(Engine::stop);
    report(results, cells);
    latency(results, pgbus);
  }

  /** {@code writers} threads repeat the variant's transaction for {@code seconds}. */
  private Cell cell(
      DataSource pool, PgbusSystem pgbus, RawSystem raw, String variant, int writers, int seconds)
      throws Exception {
    EngineStatus.Wakes wakes0 = producers.get(WakeMode.COALESCED).status().wakes();
    wakeMode(
        pool,
        IN_TRANSACTION.equals(variant) || JAVA_IN_TX.equals(variant)
            ? "in_transaction"
            : "coalesced");
    ExecutorService threads = Executors.newFixedThreadPool(writers);
    var stop = new AtomicBoolean();
    var ready = new CountDownLatch(writers);
    var go = new CountDownLatch(1);
    List<Future<long[]>> futures = new ArrayList<>();
    for (int t = 0; t < writers; t++) {
      int writer = t;
      futures.add(
          threads.submit(
              () -> {
                var latencies = new long[1 << 16];
                int n = 0;
                // A Java variant takes its connection in the engine's own transaction instead.
                try (Connection c = javaEngine(variant) == null ? pool.getConnection() : null) {
                  if (c != null) {
                    c.setAutoCommit(false);
                  }
                  ready.countDown();
                  go.await();
                  long i = 0;
                  while (!stop.get()) {
                    long t0 = System.nanoTime();
                    long n0 = i++;
                    Engine java = javaEngine(variant);
                    if (java != null) {
                      // The engine's own transaction, on a connection of the same pool.
                      java.transactions()
                          .inNewTransaction(
                              tx -> {
                                javaTransaction(tx, java, variant, writer, n0);
                                return null;
                              });
                    } else {
                      transaction(c, pgbus, raw, variant, writer, n0);
                      c.commit();
                    }
                    if (n == latencies.length) {
                      latencies = Arrays.copyOf(latencies, n * 2);
                    }
                    latencies[n++] = System.nanoTime() - t0;
                  }
                }
                return Arrays.copyOf(latencies, n);
              }));
    }
    ready.await();
    long t0 = System.nanoTime();
    go.countDown();
    Thread.sleep(seconds * 1000L);
    stop.set(true);
    List<long[]> all = new ArrayList<>();
    for (Future<long[]> f : futures) {
      all.add(f.get());
    }
    double elapsed = (System.nanoTime() - t0) / 1e9;
    threads.shutdown();
    if (JAVA_COALESCED.equals(variant)) {
      EngineStatus.Wakes w = producers.get(WakeMode.COALESCED).status().wakes();
      h.log(
          "CONC %s: %d commits, %d NOTIFY statements (%d coalesced, %d failed)",
          variant,
          all.stream().mapToInt(a -> a.length).sum(),
          w.statements() - wakes0.statements(),
          w.coalesced() - wakes0.coalesced(),
          w.failed() - wakes0.failed());
    }
    long[] lat = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    return new Cell(
        lat.length / elapsed, Stats.percentile(lat, 50) / 1e6, Stats.percentile(lat, 99) / 1e6);
  }

  private static void transaction(
      Connection c, PgbusSystem pgbus, RawSystem raw, String variant, int writer, long i)
      throws SQLException {
    long orderId = order(c, writer, i);
    switch (variant) {
      case "plain row" -> {
        try (PreparedStatement ps =
            c.prepareStatement("INSERT INTO bench_order_line (order_id, sku) VALUES (?, ?)")) {
          ps.setLong(1, orderId);
          ps.setString(2, "sku-" + (i % 100));
          ps.executeUpdate();
        }
      }
      case "pgbus SQL", IN_TRANSACTION -> sqlEnqueue(c, QUEUE, orderId);
      case "pgbus SQL, queue paused" -> sqlEnqueue(c, PAUSED_QUEUE, orderId);
      case "raw + pg_notify" -> raw.enqueueOne(c, QUEUE);
      default -> throw new IllegalArgumentException(variant);
    }
  }

  /** The engine of a Java variant, or null. */
  private Engine javaEngine(String variant) {
    return switch (variant) {
      case JAVA_COALESCED -> producers.get(WakeMode.COALESCED);
      case JAVA_IN_TX, JAVA_PAUSED -> producers.get(WakeMode.IN_TRANSACTION);
      default -> null;
    };
  }

  /** The business transaction of a Java variant: the order row and one enqueue. */
  private static void javaTransaction(
      Connection c, Engine engine, String variant, int writer, long i) throws SQLException {
    long orderId = order(c, writer, i);
    String queue = JAVA_PAUSED.equals(variant) ? PAUSED_QUEUE : QUEUE;
    engine.jobs().enqueue(c, NewJob.of(queue, "{\"order\": " + orderId + "}"));
  }

  private static long order(Connection c, int writer, long i) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO bench_order (customer, total) VALUES (?, ?) RETURNING id")) {
      ps.setInt(1, writer);
      ps.setBigDecimal(2, BigDecimal.valueOf(i % 10_000, 2));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** How the SQL enqueue path wakes (V27): the engine writes it at start; the bench per cell. */
  private static void wakeMode(DataSource pool, String mode) throws SQLException {
    try (Connection c = pool.getConnection();
        PreparedStatement ps = c.prepareStatement("UPDATE pgbus.setting SET wake_mode = ?")) {
      c.setAutoCommit(true);
      ps.setString(1, mode);
      ps.executeUpdate();
    }
  }

  private static void sqlEnqueue(Connection c, String queue, long orderId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?, ?::jsonb)")) {
      ps.setString(1, queue);
      ps.setString(2, "{\"order\": " + orderId + "}");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
      }
    }
  }

  private void report(Results results, Map<Integer, Map<String, List<Cell>>> cells) {
    var md = new StringBuilder();
    md.append(
            String.format(
                "Each writer on its own connection repeats BEGIN; INSERT an order row; the"
                    + " variant's write; COMMIT, for %d s per cell; %d run(s), the variants'"
                    + " order rotating by run; no consumer. Commits/s, median [min–max] over"
                    + " runs; the ratio is taken per run, then its median. Latency is the whole"
                    + " transaction, p50/p99 of all its commits in the cell's median run.",
                h.options.concSeconds(), h.options.runs()))
        .append("\n\n| writers |");
    VARIANTS.forEach(v -> md.append(' ').append(v).append(", commits/s |"));
    md.append(
        " pgbus SQL / plain | pgbus SQL / paused | SQL in-transaction / paused | Java coalesced / Java paused | Java"
            + " in-transaction / Java paused | Java coalesced / plain |\n|---|");
    VARIANTS.forEach(v -> md.append("---|"));
    md.append("---|---|---|---|---|---|\n");
    for (var e : cells.entrySet()) {
      Map<String, List<Cell>> m = e.getValue();
      md.append("| ").append(e.getKey()).append(" |");
      for (String v : VARIANTS) {
        md.append(' ').append(Stats.spreadRate(rates(m.get(v)))).append(" |");
      }
      md.append(' ').append(ratio(m, "pgbus SQL", "plain row")).append(" |");
      md.append(' ').append(ratio(m, "pgbus SQL", "pgbus SQL, queue paused")).append(" |");
      md.append(' ').append(ratio(m, IN_TRANSACTION, "pgbus SQL, queue paused")).append(" |");
      md.append(' ').append(ratio(m, JAVA_COALESCED, JAVA_PAUSED)).append(" |");
      md.append(' ').append(ratio(m, JAVA_IN_TX, JAVA_PAUSED)).append(" |");
      md.append(' ').append(ratio(m, JAVA_COALESCED, "plain row")).append(" |\n");
    }
    md.append("\nCommit latency, ms, p50 / p99 (median over runs):\n\n| writers |");
    VARIANTS.forEach(v -> md.append(' ').append(v).append(" |"));
    md.append("\n|---|");
    VARIANTS.forEach(v -> md.append("---|"));
    md.append('\n');
    for (var e : cells.entrySet()) {
      md.append("| ").append(e.getKey()).append(" |");
      for (String v : VARIANTS) {
        List<Cell> l = e.getValue().get(v);
        md.append(' ')
            .append(Stats.f("%.2f", Stats.median(l.stream().mapToDouble(Cell::p50Ms).toArray())))
            .append(" / ")
            .append(Stats.f("%.2f", Stats.median(l.stream().mapToDouble(Cell::p99Ms).toArray())))
            .append(" |");
      }
      md.append('\n');
    }
    results.section("CONC: a business transaction with one enqueue, many writers", md.toString());
  }

  private static final String[] PATHS = {
    "Java in-transaction, from another engine",
    "Java coalesced, from another engine",
    "Java coalesced, from the consumer's own engine"
  };

  private static final int LATENCY_JOBS = 400;
  private static final long LATENCY_INTERVAL_NANOS = 5_000_000;

  /**
   * Commit → handler start at low load, per wake path: one writer commits a job every 5 ms in the
   * producer engine's own transaction; the consumer engine (4 slots, its listener delivering) is
   * idle in between. p50 and p99 per run, ms; median [min–max] over runs.
   */
  private void latency(Results results, PgbusSystem pgbus) throws Exception {
    Map<String, List<double[]>> byPath = new LinkedHashMap<>();
    for (String p : PATHS) {
      byPath.put(p, new ArrayList<>());
    }
    try (BenchDatabase db = h.server.createDatabase("conc_lat")) {
      h.install(pgbus, db);
      try (var pool = db.pool("conc-latency", 12, 12)) {
        for (int r = 0; r < h.options.runs(); r++) {
          for (int i = 0; i < PATHS.length; i++) {
            String path = PATHS[(i + r) % PATHS.length];
            double[] p = latencyOnce(db, pool, pgbus, path);
            byPath.get(path).add(p);
            h.log(
                "CONC latency run %d, %s: p50 %.2f ms, p99 %.2f ms, %.2f empty claims per job",
                r + 1, path, p[0], p[1], p[2]);
          }
        }
      }
    }
    var md = new StringBuilder();
    md.append(
            String.format(
                "One writer commits a job every %d ms, %d jobs per run, in the producer engine's"
                    + " own transaction (engine.transactions()); the consumer engine idles in"
                    + " between. From the commit returning to the handler starting, ms, median"
                    + " [min–max] over %d run(s); the consumer's empty claims per job (the"
                    + " own engine's path hears its sender's NOTIFY too).",
                LATENCY_INTERVAL_NANOS / 1_000_000, LATENCY_JOBS, h.options.runs()))
        .append("\n\n| wake path | p50 | p99 | empty claims per job |\n|---|---|---|---|\n");
    for (var e : byPath.entrySet()) {
      double[] p50 = e.getValue().stream().mapToDouble(a -> a[0]).toArray();
      double[] p99 = e.getValue().stream().mapToDouble(a -> a[1]).toArray();
      double[] empty = e.getValue().stream().mapToDouble(a -> a[2]).toArray();
      md.append("| ")
          .append(e.getKey())
          .append(" | ")
          .append(Stats.spread(p50, "%.2f"))
          .append(" | ")
          .append(Stats.spread(p99, "%.2f"))
          .append(" | ")
          .append(Stats.spread(empty, "%.2f"))
          .append(" |\n");
    }
    results.section("CONC: commit → handler start at low load, per wake path", md.toString());
  }

  private double[] latencyOnce(BenchDatabase db, DataSource pool, PgbusSystem pgbus, String path)
      throws Exception {
    var tracker = new JobTracker();
    double emptyPerJob;
    try (PgbusSystem.Running consumer =
        pgbus.startCapsules(db, pool, List.of(List.of(QUEUE)), 4, tracker)) {
      consumer.awaitReady(Duration.ofSeconds(30));
      Engine producer;
      if (path.contains("own engine")) {
        producer = consumer.engine;
      } else {
        WakeMode mode = path.contains("coalesced") ? WakeMode.COALESCED : WakeMode.IN_TRANSACTION;
        producer =
            Engine.builder(
                    EngineConfig.builder().workerId("conc-latency-producer").wakeMode(mode).build(),
                    pool)
                .maintenance(false)
                .build();
        producer.start();
      }
      Sleep.millis(1_000); // the start-up poll and election settle: we measure idle
      long empty0 = emptyClaims(consumer.engine);
      try {
        long next = System.nanoTime();
        for (int i = 0; i < LATENCY_JOBS; i++) {
          Sleep.until(next);
          long id =
              producer
                  .transactions()
                  .inNewTransaction(c -> producer.jobs().enqueue(c, NewJob.of(QUEUE, "{}")));
          tracker.committed(id, System.nanoTime());
          next += LATENCY_INTERVAL_NANOS;
        }
        if (!tracker.awaitStarted(LATENCY_JOBS, Duration.ofSeconds(30))) {
          throw new IllegalStateException(
              path + ": only " + tracker.started() + " of " + LATENCY_JOBS + " jobs started");
        }
        Sleep.millis(200); // the claims the last wakes bring
        emptyPerJob = (emptyClaims(consumer.engine) - empty0) / (double) LATENCY_JOBS;
      } finally {
        if (producer != consumer.engine) {
          producer.stop();
        }
      }
    }
    long[] us = tracker.latenciesMicros();
    return new double[] {
      Stats.percentile(us, 50) / 1e3, Stats.percentile(us, 99) / 1e3, emptyPerJob
    };
  }

  private static long emptyClaims(Engine engine) {
    return engine.status().capsules().stream()
        .mapToLong(EngineStatus.CapsuleStatus::emptyClaims)
        .sum();
  }

  private static double[] rates(List<Cell> l) {
    return l.stream().mapToDouble(Cell::perSec).toArray();
  }

  private static String ratio(Map<String, List<Cell>> m, String top, String bottom) {
    List<Cell> a = m.get(top);
    List<Cell> b = m.get(bottom);
    double[] r = new double[a.size()];
    for (int i = 0; i < r.length; i++) {
      r[i] = a.get(i).perSec / b.get(i).perSec;
    }
    return Stats.spread(r, "%.2f");
  }
}

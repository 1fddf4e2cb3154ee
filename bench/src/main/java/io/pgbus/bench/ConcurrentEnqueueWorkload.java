package io.pgbus.bench;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
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
 * Jobs.enqueue} (the Java API on the caller's connection), {@code pgbus.enqueue} into a paused
 * queue (pgbus sends no NOTIFY for a paused queue: the no-NOTIFY baseline of the same insert),
 * raw's INSERT + {@code pg_notify}, and a prototype of a wake sent after the commit (issue #26's
 * first design): the paused queue's insert, then, after the commit, a request to one coalescing
 * thread that sends at most one {@code pg_notify} per millisecond on a connection of its own (its
 * wakes per second are reported). No consumer runs. Variants run back to back per writer count, the
 * order rotating by run, all in one database; the ratio is taken per run, then its median.
 */
final class ConcurrentEnqueueWorkload {

  private static final String QUEUE = "conc";
  private static final String PAUSED_QUEUE = "conc_paused";

  static final String AFTER_COMMIT = "after-commit wake (prototype)";

  /**
   * pgbus SQL with pgbus.setting.wake_mode = 'in_transaction': a NOTIFY at every commit (0.1.0).
   */
  static final String IN_TRANSACTION = "pgbus SQL, in-transaction wake";

  static final List<String> VARIANTS =
      List.of(
          "plain row",
          "pgbus SQL",
          IN_TRANSACTION,
          "pgbus Java",
          "pgbus SQL, queue paused",
          AFTER_COMMIT,
          "raw + pg_notify");

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
      try (var pool = db.pool("conc-writers", maxWriters + 1, maxWriters + 1)) {
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
    report(results, cells);
  }

  /** {@code writers} threads repeat the variant's transaction for {@code seconds}. */
  private Cell cell(
      DataSource pool, PgbusSystem pgbus, RawSystem raw, String variant, int writers, int seconds)
      throws Exception {
    AfterCommitWaker waker = AFTER_COMMIT.equals(variant) ? new AfterCommitWaker(pool) : null;
    wakeMode(pool, IN_TRANSACTION.equals(variant) ? "in_transaction" : "coalesced");
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
                try (Connection c = pool.getConnection()) {
                  c.setAutoCommit(false);
                  ready.countDown();
                  go.await();
                  long i = 0;
                  while (!stop.get()) {
                    long t0 = System.nanoTime();
                    transaction(c, pgbus, raw, variant, writer, i++);
                    c.commit();
                    if (waker != null) {
                      waker.request();
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
    if (waker != null) {
      h.log(
          "CONC %s: %d wakes sent for %d commits",
          variant, waker.close(), all.stream().mapToInt(a -> a.length).sum());
    }
    long[] lat = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    return new Cell(
        lat.length / elapsed, Stats.percentile(lat, 50) / 1e6, Stats.percentile(lat, 99) / 1e6);
  }

  private static void transaction(
      Connection c, PgbusSystem pgbus, RawSystem raw, String variant, int writer, long i)
      throws SQLException {
    long orderId;
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO bench_order (customer, total) VALUES (?, ?) RETURNING id")) {
      ps.setInt(1, writer);
      ps.setBigDecimal(2, BigDecimal.valueOf(i % 10_000, 2));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        orderId = rs.getLong(1);
      }
    }
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
      case "pgbus SQL, queue paused", AFTER_COMMIT -> sqlEnqueue(c, PAUSED_QUEUE, orderId);
      case "pgbus Java" -> pgbus.enqueueOne(c, QUEUE);
      case "raw + pg_notify" -> raw.enqueueOne(c, QUEUE);
      default -> throw new IllegalArgumentException(variant);
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
        " pgbus SQL / plain | pgbus SQL / paused | in-transaction / paused | pgbus Java / paused"
            + " | after-commit / paused |\n|---|");
    VARIANTS.forEach(v -> md.append("---|"));
    md.append("---|---|---|---|---|\n");
    for (var e : cells.entrySet()) {
      Map<String, List<Cell>> m = e.getValue();
      md.append("| ").append(e.getKey()).append(" |");
      for (String v : VARIANTS) {
        md.append(' ').append(Stats.spreadRate(rates(m.get(v)))).append(" |");
      }
      md.append(' ').append(ratio(m, "pgbus SQL", "plain row")).append(" |");
      md.append(' ').append(ratio(m, "pgbus SQL", "pgbus SQL, queue paused")).append(" |");
      md.append(' ').append(ratio(m, IN_TRANSACTION, "pgbus SQL, queue paused")).append(" |");
      md.append(' ').append(ratio(m, "pgbus Java", "pgbus SQL, queue paused")).append(" |");
      md.append(' ').append(ratio(m, AFTER_COMMIT, "pgbus SQL, queue paused")).append(" |\n");
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

  /**
   * The prototype's waker: writers call {@link #request} after their commit; one thread sends at
   * most one {@code pg_notify} per millisecond on its own auto-commit connection, so business
   * commits never take PostgreSQL's notification lock and the waker takes it at most 1,000 times a
   * second, in transactions that write nothing (no WAL flush while it is held).
   */
  private static final class AfterCommitWaker {
    private final Object lock = new Object();
    private final Thread thread;
    private boolean requested;
    private boolean closed;
    private long sent;

    AfterCommitWaker(DataSource pool) throws SQLException {
      Connection c = pool.getConnection();
      c.setAutoCommit(true);
      thread =
          new Thread(
              () -> {
                try (c;
                    PreparedStatement ps =
                        c.prepareStatement("SELECT pg_notify('pgbus_conc', '')")) {
                  while (true) {
                    synchronized (lock) {
                      while (!requested && !closed) {
                        lock.wait();
                      }
                      if (closed) {
                        return;
                      }
                      requested = false;
                    }
                    long t0 = System.nanoTime();
                    ps.execute();
                    sent++;
                    long left = 1_000_000 - (System.nanoTime() - t0);
                    if (left > 0) {
                      Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
                    }
                  }
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                } catch (SQLException e) {
                  throw new IllegalStateException("CONC waker: " + e.getMessage(), e);
                }
              },
              "conc-waker");
      thread.start();
    }

    void request() {
      synchronized (lock) {
        requested = true;
        lock.notify();
      }
    }

    long close() throws InterruptedException {
      synchronized (lock) {
        closed = true;
        lock.notify();
      }
      thread.join();
      return sent;
    }
  }
}

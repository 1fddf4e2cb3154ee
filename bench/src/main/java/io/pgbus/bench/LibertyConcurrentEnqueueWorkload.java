package io.pgbus.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * CONC-L: CONC through the Java API inside JTA on Open Liberty (issue #26). Many HTTP clients call
 * the demo's {@code POST /api/signups} at once; each call is one container transaction that inserts
 * a {@code demo_signup} row and, unless {@code welcome=false}, enqueues a greeting through {@code
 * JobQueue} in the same transaction. Three variants, interleaved per number of writers, in one run:
 * the plain row; the row and the enqueue (the demo's {@code pgbus.wake-mode}, coalesced by default:
 * the wake goes out after the commit); the same with the queue paused (no wake at all: the
 * no-NOTIFY baseline). The greetings are due in a day so that no handler runs during the
 * measurement; the bench deletes them and its sign-ups afterwards.
 */
final class LibertyConcurrentEnqueueWorkload {

  private static final String QUEUE = "greetings";
  private static final String PLAIN = "Liberty JTA, plain row";
  private static final String ENQUEUE = "Liberty JTA, row + enqueue";
  private static final String PAUSED = "Liberty JTA, row + enqueue, queue paused";
  private static final List<String> VARIANTS = List.of(PLAIN, ENQUEUE, PAUSED);
  private static final String BENCH_NAME = "conc-liberty-bench";

  private record Cell(double tps, double p50, double p99, long errors) {}

  private final Harness h;

  LibertyConcurrentEnqueueWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    BenchOptions o = h.options;
    if (o.libertyDb() == null || o.libertyHttp() == null) {
      results.section(
          "CONC-L: concurrent enqueuing commits through JTA on Liberty",
          "Skipped: CONC-L needs a running demo server. `./run-bench --with-demo"
              + " --only=conc-liberty` starts one (./run-demo), measures, and stops it.");
      return;
    }
    var demo = new DemoServer(o.libertyDb(), o.libertyHttp());
    h.log("CONC-L waiting for the demo server %s ...", demo);
    demo.awaitReady(Duration.ofMinutes(2));
    String database;
    try (Connection c = demo.connect("bench-conc-liberty")) {
      database = demo.describe(c);
    }
    List<Integer> writers = o.concWriters();
    int max = writers.stream().mapToInt(Integer::intValue).max().orElse(1);
    ExecutorService httpThreads = Executors.newFixedThreadPool(Math.max(4, max));
    HttpClient http =
        HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(httpThreads).build();
    try {
      h.log("CONC-L warm-up (unmeasured) ...");
      for (String v : VARIANTS) {
        cell(demo, http, v, max, Math.max(3, o.concSeconds() / 2));
      }
      Map<Integer, Map<String, List<Cell>>> cells = new LinkedHashMap<>();
      for (int r = 1; r <= o.runs(); r++) {
        for (int w : writers) {
          for (String v : VARIANTS) {
            Cell c = cell(demo, http, v, w, o.concSeconds());
            cells
                .computeIfAbsent(w, k -> new LinkedHashMap<>())
                .computeIfAbsent(v, k -> new ArrayList<>())
                .add(c);
            h.log(
                "CONC-L run %d, %d writers, %s: %.0f tps, p50 %.2f ms, p99 %.2f ms, %d errors",
                r, w, v, c.tps, c.p50, c.p99, c.errors);
          }
        }
      }
      report(results, database, cells);
    } finally {
      httpThreads.shutdownNow(); // its threads would keep the bench's JVM from exiting
      cleanUp(demo);
    }
  }

  private Cell cell(DemoServer demo, HttpClient http, String variant, int writers, int seconds)
      throws Exception {
    pause(demo, PAUSED.equals(variant));
    String query =
        PLAIN.equals(variant) ? "welcome=false" : "welcome=true&delaySeconds=" + (24 * 3600);
    URI uri = URI.create(h.options.libertyHttp() + "/api/signups?name=" + BENCH_NAME + "&" + query);
    ExecutorService threads = Executors.newFixedThreadPool(writers);
    var stop = new AtomicBoolean();
    var errors = new AtomicLong();
    var ready = new CountDownLatch(writers);
    var go = new CountDownLatch(1);
    List<Future<long[]>> futures = new ArrayList<>();
    for (int t = 0; t < writers; t++) {
      futures.add(
          threads.submit(
              () -> {
                var latencies = new long[1 << 14];
                int n = 0;
                HttpRequest request =
                    HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(30))
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build();
                ready.countDown();
                go.await();
                while (!stop.get()) {
                  long t0 = System.nanoTime();
                  HttpResponse<Void> r = http.send(request, HttpResponse.BodyHandlers.discarding());
                  if (r.statusCode() != 200) {
                    errors.incrementAndGet();
                    continue;
                  }
                  if (n == latencies.length) {
                    latencies = Arrays.copyOf(latencies, n * 2);
                  }
                  latencies[n++] = System.nanoTime() - t0;
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
    pause(demo, false);
    long[] lat = all.stream().flatMapToLong(Arrays::stream).sorted().toArray();
    return new Cell(
        lat.length / elapsed,
        Stats.percentile(lat, 50) / 1e6,
        Stats.percentile(lat, 99) / 1e6,
        errors.get());
  }

  private static void pause(DemoServer demo, boolean paused) throws Exception {
    try (Connection c = demo.connect("bench-conc-liberty");
        PreparedStatement ps =
            c.prepareStatement(
                paused ? "SELECT pgbus.pause(?, 'bench')" : "SELECT pgbus.resume(?)")) {
      ps.setString(1, QUEUE);
      ps.execute();
    }
  }

  /** Deletes the bench's sign-ups and their greetings (due in a day: none has run). */
  private void cleanUp(DemoServer demo) {
    try (Connection c = demo.connect("bench-conc-liberty");
        Statement s = c.createStatement()) {
      s.execute("SELECT pgbus.resume('" + QUEUE + "')");
      int jobs =
          s.executeUpdate(
              "DELETE FROM pgbus.job j USING demo_signup s WHERE s.name = '"
                  + BENCH_NAME
                  + "' AND j.id = s.welcome_job_id AND j.state = 'scheduled'");
      int rows = s.executeUpdate("DELETE FROM demo_signup WHERE name = '" + BENCH_NAME + "'");
      h.log("CONC-L cleaned up %d sign-ups and %d greetings", rows, jobs);
    } catch (Exception e) {
      h.log("CONC-L could not clean up: %s", e.getMessage());
    }
  }

  private void report(
      Results results, String database, Map<Integer, Map<String, List<Cell>>> cells) {
    var header = new ArrayList<String>();
    header.add("writers");
    for (String v : VARIANTS) {
      header.add(v + " tps (p50 / p99 ms)");
    }
    header.add("enqueue / plain");
    header.add("enqueue / paused");
    var rows = new ArrayList<List<String>>();
    cells.forEach(
        (w, byVariant) -> {
          var row = new ArrayList<String>();
          row.add(Integer.toString(w));
          Map<String, Double> tps = new LinkedHashMap<>();
          for (String v : VARIANTS) {
            List<Cell> cs = byVariant.get(v);
            double median = median(cs.stream().mapToDouble(Cell::tps).toArray());
            tps.put(v, median);
            long errs = cs.stream().mapToLong(Cell::errors).sum();
            row.add(
                String.format(
                    Locale.ROOT,
                    "%.0f (%.2f / %.2f)%s",
                    median,
                    median(cs.stream().mapToDouble(Cell::p50).toArray()),
                    median(cs.stream().mapToDouble(Cell::p99).toArray()),
                    errs == 0 ? "" : ", " + errs + " errors"));
          }
          row.add(String.format(Locale.ROOT, "%.2f×", tps.get(ENQUEUE) / tps.get(PLAIN)));
          row.add(String.format(Locale.ROOT, "%.2f×", tps.get(ENQUEUE) / tps.get(PAUSED)));
          rows.add(row);
        });
    results.section(
        "CONC-L: concurrent enqueuing commits through JTA on Liberty",
        "The demo server (Open Liberty, "
            + database
            + ") answers `POST /api/signups`: one container transaction per call, a"
            + " `demo_signup` row, and with the enqueue a greeting through `JobQueue` (due in a"
            + " day, so no handler runs). Commits per second over "
            + h.options.concSeconds()
            + " s per cell, median of "
            + h.options.runs()
            + " run(s), interleaved; HTTP clients in this JVM on the same machine.\n\n"
            + Results.table(header, rows));
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length == 0 ? Double.NaN : v[v.length / 2];
  }
}

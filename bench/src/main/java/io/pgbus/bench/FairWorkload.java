package io.pgbus.bench;

import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.JobStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * FAIR: what fair share between tenants (issue #30) costs the claim, against the same queue without
 * it in the same rounds. Three queues get the same backlog each round, {@code jobs} jobs dealt over
 * 10 tenants (concurrency keys, at most 100,000 running each): {@code keyed} (a limit row, served
 * oldest first: the same queue without fair share), {@code fair} (the same row with {@code
 * fair_key}) and {@code plain} (no keys, no limit row: the claim's cheapest path). Measured: claims
 * of 10 jobs and their completions, one transaction per claim on one connection, until the backlog
 * is gone. The queues take turns within each round (the order rotates by round), so each ratio is
 * taken over seconds of the same load; the report gives the median ratio and its range.
 */
final class FairWorkload {

  private static final String PLAIN = "fair_plain";
  private static final String KEYED = "fair_keyed";
  private static final String FAIR = "fair_fair";
  private static final int TENANTS = 10;
  private static final int TAKE = 10;

  private final Harness h;

  FairWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    int jobs = h.options.singleJobs() * 2;
    int rounds = Math.max(3, h.options.runs() * 2);
    JobStore store = new JobStore();
    var fairVsKeyed = new ArrayList<Double>();
    var fairVsPlain = new ArrayList<Double>();
    var last = new HashMap<String, Double>();
    try (BenchDatabase db = h.server.createDatabase("fair")) {
      h.install(new PgbusSystem(), db);
      try (var pool = db.pool("fair", 1, 1);
          Connection c = pool.getConnection()) {
        c.setAutoCommit(true);
        try (var st = c.createStatement()) {
          for (String q : List.of(KEYED, FAIR)) {
            st.execute("SELECT pgbus.queue_limit_set('" + q + "', key_concurrency => 100000)");
          }
          st.execute("SELECT pgbus.queue_fair_set('" + FAIR + "', 'concurrency_key')");
        }
        c.setAutoCommit(false);
        List<String> queues = List.of(PLAIN, KEYED, FAIR);
        for (String q : queues) { // unmeasured: the JIT, the server-side prepares
          backlog(c, q, 500);
          drain(store, c, q);
        }
        for (int r = 0; r < rounds; r++) {
          var perJob = new HashMap<String, Double>();
          for (int i = 0; i < queues.size(); i++) {
            String q = queues.get((i + r) % queues.size());
            backlog(c, q, jobs);
            perJob.put(q, drain(store, c, q));
          }
          // Throughput ratios: time per job of the baseline over that of the fair queue.
          fairVsKeyed.add(perJob.get(KEYED) / perJob.get(FAIR));
          fairVsPlain.add(perJob.get(PLAIN) / perJob.get(FAIR));
          last = perJob;
          h.log(
              "FAIR round %d: claim+complete µs/job plain %.1f, keyed %.1f, fair %.1f",
              r + 1, perJob.get(PLAIN), perJob.get(KEYED), perJob.get(FAIR));
        }
      }
    }
    String md =
        String.format(
            "%d rounds of %,d jobs per queue over %d tenants, claims of %d and their completions,"
                + " one transaction per claim on one connection; throughput ratio = baseline"
                + " µs/job / fair µs/job per round, median [min–max].%n%n"
                + "| FAIR | µs/job (last round) | fair throughput vs it |%n"
                + "|---|---|---|%n"
                + "| keyed, oldest first (the same queue without fair share) | %.1f | %s |%n"
                + "| plain (no keys, no limit row) | %.1f | %s |%n"
                + "| fair (`fair-key=concurrency-key`) | %.1f | 1 |%n",
            rounds,
            jobs,
            TENANTS,
            TAKE,
            last.get(KEYED),
            ratio(fairVsKeyed),
            last.get(PLAIN),
            ratio(fairVsPlain),
            last.get(FAIR));
    results.section("FAIR: the cost of fair share between tenants", md);
  }

  private static String ratio(List<Double> l) {
    var s = new ArrayList<>(l);
    s.sort(null);
    return String.format("%.2f× [%.2f–%.2f]", s.get(s.size() / 2), s.get(0), s.get(s.size() - 1));
  }

  /** n due jobs dealt over the tenants (none for the plain queue), committed. */
  private static void backlog(Connection c, String queue, int n) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO pgbus.job (queue, payload, concurrency_key)"
                + " SELECT ?, jsonb_build_object('n', i),"
                + " CASE WHEN ? THEN 'tenant-' || (i % ?) END"
                + " FROM generate_series(1, ?) AS i")) {
      ps.setString(1, queue);
      ps.setBoolean(2, !queue.equals(PLAIN));
      ps.setInt(3, TENANTS);
      ps.setInt(4, n);
      ps.executeUpdate();
    }
    c.commit();
  }

  /** µs per job to claim (TAKE at a time) and complete the queue's backlog. */
  private static double drain(JobStore store, Connection c, String queue) throws Exception {
    long t0 = System.nanoTime();
    int done = 0;
    while (true) {
      List<ClaimedJob> got =
          store.jobClaim(c, List.of(queue), TAKE, "bench", Duration.ofMinutes(5));
      if (got.isEmpty()) {
        c.commit();
        break;
      }
      for (ClaimedJob j : got) {
        store.jobComplete(c, j, true);
      }
      c.commit();
      done += got.size();
    }
    if (done == 0) {
      throw new IllegalStateException("FAIR: claimed nothing from " + queue);
    }
    return (System.nanoTime() - t0) / 1e3 / done;
  }
}

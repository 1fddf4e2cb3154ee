package io.pgbus.bench;

import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.JobStore;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.KeyRing;
import io.pgbus.engine.NewJob;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * CRYPT: what payload encryption (issue #30) costs an enqueue and a claim, against the same path of
 * a plain queue in the same rounds. Enqueue: {@code Jobs.enqueue} of a ~200-byte payload, one
 * transaction per job on one connection. Claim: {@code JobStore.jobClaim} of one job, its payload
 * opened as the runner opens it, and its completion, one transaction per job. The two queues
 * alternate within each round (the order flips by round), so each ratio is taken over seconds of
 * the same load; the report gives the median ratio and its range.
 */
final class CryptWorkload {

  private static final String PLAIN = "crypt_plain";
  private static final String SEALED = "crypt_sealed";
  private static final String PAYLOAD =
      "{\"customer\": \"Jane Example\", \"iban\": \"DE89370400440532013000\","
          + " \"address\": \"1 Example Street, 10115 Berlin\", \"amount\": 1234.56,"
          + " \"note\": \"a payload of about two hundred bytes, as a typical job carries\"}";

  private final Harness h;

  CryptWorkload(Harness h) {
    this.h = h;
  }

  void run(Results results) throws Exception {
    int jobs = h.options.singleJobs();
    int rounds = Math.max(3, h.options.runs() * 2);
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    KeyRing ring =
        io.pgbus.engine.EncryptionKeys.load(
            k ->
                Optional.ofNullable(
                    Map.of(
                            "pgbus.encryption.key-ids",
                            "bench",
                            "pgbus.encryption.key.bench",
                            java.util.Base64.getEncoder().encodeToString(key))
                        .get(k)),
            List.of(SEALED));
    JobCipher cipher = new JobCipher(ring, Set.of(SEALED));
    Jobs ops = new Jobs(EngineConfig.builder().build(), cipher);
    JobStore store = new JobStore();
    var enqueueRatios = new ArrayList<Double>();
    var claimRatios = new ArrayList<Double>();
    double[] last = new double[4];
    try (BenchDatabase db = h.server.createDatabase("crypt")) {
      h.install(new PgbusSystem(), db);
      try (var pool = db.pool("crypt", 1, 1);
          Connection c = pool.getConnection()) {
        c.setAutoCommit(false);
        // Unmeasured: the JIT, the server-side prepares, AES-GCM's intrinsics.
        for (String q : List.of(PLAIN, SEALED)) {
          enqueue(ops, c, q, 500);
          claim(store, cipher, c, q, 500);
        }
        for (int r = 0; r < rounds; r++) {
          List<String> order = r % 2 == 0 ? List.of(PLAIN, SEALED) : List.of(SEALED, PLAIN);
          var enq = new java.util.HashMap<String, Double>();
          var cl = new java.util.HashMap<String, Double>();
          for (String q : order) {
            enq.put(q, enqueue(ops, c, q, jobs));
          }
          for (String q : order) {
            cl.put(q, claim(store, cipher, c, q, jobs));
          }
          enqueueRatios.add(enq.get(SEALED) / enq.get(PLAIN));
          claimRatios.add(cl.get(SEALED) / cl.get(PLAIN));
          last = new double[] {enq.get(PLAIN), enq.get(SEALED), cl.get(PLAIN), cl.get(SEALED)};
          h.log(
              "CRYPT round %d: enqueue plain %.1f µs, sealed %.1f µs; claim+complete plain %.1f"
                  + " µs, sealed %.1f µs",
              r + 1, last[0], last[1], last[2], last[3]);
        }
      }
    }
    // The Java cost alone, without the database: seal and open of the same payload.
    int reps = 50_000;
    String sealed = cipher.sealPayload(SEALED, PAYLOAD);
    for (int i = 0; i < reps; i++) { // warm-up
      cipher.openPayload(SEALED, i, cipher.sealPayload(SEALED, PAYLOAD));
    }
    long t0 = System.nanoTime();
    for (int i = 0; i < reps; i++) {
      sealed = cipher.sealPayload(SEALED, PAYLOAD);
    }
    double sealMicros = (System.nanoTime() - t0) / 1e3 / reps;
    t0 = System.nanoTime();
    for (int i = 0; i < reps; i++) {
      cipher.openPayload(SEALED, i, sealed);
    }
    double openMicros = (System.nanoTime() - t0) / 1e3 / reps;
    h.log("CRYPT: seal %.2f µs, open %.2f µs per payload", sealMicros, openMicros);
    String md =
        String.format(
            "%d rounds of %,d jobs per queue and path, one transaction per job on one connection;"
                + " ratio = encrypted / plain per round, median [min–max].%n%n"
                + "| CRYPT | plain µs/job (last round) | encrypted µs/job (last round) | ratio |%n"
                + "|---|---|---|---|%n"
                + "| enqueue (Jobs.enqueue) | %.1f | %.1f | %s |%n"
                + "| claim + open + complete | %.1f | %.1f | %s |%n%n"
                + "Java alone, per %d-byte payload (%d bytes sealed): seal %.2f µs, open %.2f"
                + " µs (mean of %,d).%n",
            rounds,
            jobs,
            last[0],
            last[1],
            ratio(enqueueRatios),
            last[2],
            last[3],
            ratio(claimRatios),
            PAYLOAD.length(),
            sealed.length(),
            sealMicros,
            openMicros,
            reps);
    results.section("CRYPT: the cost of payload encryption", md);
  }

  private static String ratio(List<Double> l) {
    var s = new ArrayList<>(l);
    s.sort(null);
    return String.format("%.2f× [%.2f–%.2f]", s.get(s.size() / 2), s.get(0), s.get(s.size() - 1));
  }

  /** µs per enqueue of {@code n} jobs, one transaction each. */
  private static double enqueue(Jobs ops, Connection c, String queue, int n) throws Exception {
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      ops.enqueue(c, NewJob.of(queue, PAYLOAD));
      c.commit();
    }
    return (System.nanoTime() - t0) / 1e3 / n;
  }

  /** µs per claim of one job, its payload opened, and its completion, one transaction each. */
  private static double claim(JobStore store, JobCipher cipher, Connection c, String queue, int n)
      throws Exception {
    long t0 = System.nanoTime();
    int done = 0;
    while (done < n) {
      List<ClaimedJob> got = store.jobClaim(c, List.of(queue), 1, "bench", Duration.ofMinutes(5));
      if (got.isEmpty()) {
        break;
      }
      ClaimedJob j = got.get(0);
      if (cipher.openPayload(queue, j.id(), j.payload()).length() < 10) {
        throw new IllegalStateException("CRYPT: job " + j.id() + " has no payload");
      }
      store.jobComplete(c, j, true);
      c.commit();
      done++;
    }
    if (done < n) {
      throw new IllegalStateException("CRYPT: claimed " + done + " of " + n + " jobs");
    }
    return (System.nanoTime() - t0) / 1e3 / n;
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.AutoExplain;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fair share (issue #30, V50) in SQL: pgbus.claim deals a fair queue's due jobs over its tenants
 * (concurrency keys), weighted, through index probes per tenant, whatever one tenant's backlog.
 */
class FairShareTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach("pgbus.job", "pgbus.queue_limit", "pgbus.queue_fair_pass");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final int BACKLOG = 100_000;
  private static final int TAKE = 10;

  @Test
  void aNewTenantsJobIsClaimedByTheNextClaimBehindAnotherTenantsBacklogOf100000() throws Exception {
    fair("fair", "{}");
    db.update("ALTER TABLE pgbus.job SET (autovacuum_enabled = false)");
    insert("fair", "A", BACKLOG, 0);
    for (int i = 0; i < 3; i++) {
      assertThat(claim("fair", TAKE, null)).hasSize(TAKE);
    }
    long b = insert("fair", "B", 1, 0).get(0);

    List<JsonObject> plans = new ArrayList<>();
    List<Long> next = claim("fair", TAKE, plans);

    assertThat(next).as("the next claim of %s", TAKE).hasSize(TAKE).contains(b);
    // Index-driven: no scan of pgbus.job in the claim reads more than a claim's worth of rows
    // (the backlog is 100,000 rows of one tenant at the head of the level).
    assertThat(plans).isNotEmpty();
    for (JsonObject p : plans) {
      for (JsonObject scan : scans(p.getJsonObject("Plan"))) {
        assertThat(scan.getString("Node Type"))
            .as("scan of pgbus.job in %s", p)
            .isIn("Index Scan", "Index Only Scan");
        double rows =
            scan.getJsonNumber("Actual Rows").doubleValue()
                * scan.getJsonNumber("Actual Loops").doubleValue();
        assertThat(rows).as("rows read by %s in %s", scan, p).isLessThan(1_000);
      }
    }
  }

  @Test
  void aClaimAmong10000TenantsReadsAClaimsWorthOfRowsAndARoundServesEachTenantOnce()
      throws Exception {
    fair("many", "{}");
    // Two jobs for each of 10,000 tenants, the tenants interleaved (each one's first job in the
    // first half); the jobs' ages are their ids.
    db.update(
        "INSERT INTO pgbus.job (queue, payload, concurrency_key, run_at)"
            + " SELECT 'many', '{}', 't' || (i % 10000), now() - interval '1 hour'"
            + " + i * interval '1 ms' FROM generate_series(0, 19999) AS i");
    db.update("ANALYZE pgbus.job");

    List<JsonObject> plans = new ArrayList<>();
    List<Long> first = claim("many", TAKE, plans);
    assertThat(first).as("the ten oldest jobs, ten tenants").hasSize(TAKE);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job WHERE queue = 'many' ORDER BY id LIMIT 10"))
        .containsExactlyElementsOf(first);
    for (JsonObject p : plans) {
      for (JsonObject scan : scans(p.getJsonObject("Plan"))) {
        double rows =
            scan.getJsonNumber("Actual Rows").doubleValue()
                * scan.getJsonNumber("Actual Loops").doubleValue();
        assertThat(rows).as("rows read by %s in %s", scan, p).isLessThan(1_000);
      }
    }
    // A round: every tenant once before any twice, oldest first job first. 1,000 tenants, two
    // jobs each, 100 claims of ten, each committed, on one connection.
    fair("round", "{}");
    db.update(
        "INSERT INTO pgbus.job (queue, payload, concurrency_key, run_at)"
            + " SELECT 'round', '{}', 't' || (i % 1000), now() - interval '1 hour'"
            + " + i * interval '1 ms' FROM generate_series(0, 1999) AS i");
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pgbus.claim_jobs(ARRAY['round'], 10, 'fair-test',"
                    + " interval '5 minutes')")) {
      for (int i = 0; i < 100; i++) {
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getInt(1)).as("claim %s", i).isEqualTo(TAKE);
        }
      }
    }
    assertThat(
            db.queryLong(
                "SELECT count(DISTINCT concurrency_key) FROM pgbus.job"
                    + " WHERE queue = 'round' AND state = 'running'"))
        .isEqualTo(1_000);
    assertThat(
            db.queryLongs(
                "SELECT id FROM pgbus.job WHERE queue = 'round' AND state = 'running' ORDER BY id"))
        .as("each tenant's first job")
        .containsExactlyElementsOf(
            db.queryLongs("SELECT id FROM pgbus.job WHERE queue = 'round' ORDER BY id LIMIT 1000"));
  }

  @Test
  void theWalkDealsWhatTheFullDealWouldClaimByClaim() throws Exception {
    // Two queues with the same jobs: "walked" has no weights (the claim may walk the level),
    // "dealt" names a weight of 1 for a tenant that never comes (the same shares, and always the
    // full deal). 300 tenants of uneven size, a key limit of 2, jobs due over the last hour in an
    // order unlike their ids, one in twenty due tomorrow, completions between the claims.
    for (String q : List.of("walked", "dealt")) {
      db.queryText("SELECT pgbus.queue_limit_set(?, key_concurrency => 2)", q);
      db.queryText(
          "SELECT pgbus.queue_fair_set(?, 'concurrency_key', ?::jsonb)",
          q,
          q.equals("walked") ? "{}" : "{\"nobody\": 1}");
      db.update(
          "INSERT INTO pgbus.job (queue, payload, concurrency_key, run_at)"
              + " SELECT ?, jsonb_build_object('i', i),"
              + " 't' || floor(power(((i * 2654435761) % 1000003) / 1000003.0, 2) * 300),"
              + " now() - interval '1 hour' + ((i * 104729) % 3600000) * interval '1 ms'"
              + " + CASE WHEN i % 20 = 0 THEN interval '1 day' ELSE interval '0' END"
              + " FROM generate_series(0::bigint, 5999) AS i",
          q);
    }
    db.update("ANALYZE pgbus.job");
    Map<String, List<List<Long>>> claims = new HashMap<>();
    try (Connection c = db.connect();
        PreparedStatement claim =
            c.prepareStatement(
                "SELECT pg_catalog.array_agg((j.payload ->> 'i')::bigint ORDER BY j.id)"
                    + " FROM pgbus.claim_jobs(ARRAY[?], 10, 'fair-test', interval '5 minutes') x"
                    + " JOIN pgbus.job j ON j.id = x.job_id");
        PreparedStatement complete =
            c.prepareStatement(
                "UPDATE pgbus.job SET state = 'completed', finalized_at = now()"
                    + " WHERE queue::text = ?::text AND (payload ->> 'i')::bigint = ANY (?)")) {
      for (int round = 0; round < 150; round++) {
        for (String q : List.of("walked", "dealt")) {
          List<List<Long>> mine = claims.computeIfAbsent(q, k -> new ArrayList<>());
          claim.setString(1, q);
          try (ResultSet rs = claim.executeQuery()) {
            rs.next();
            java.sql.Array ids = rs.getArray(1);
            mine.add(ids == null ? List.of() : List.of((Long[]) ids.getArray()));
          }
          if (round % 7 == 6) {
            complete.setString(1, q);
            complete.setArray(2, c.createArrayOf("bigint", mine.get(round - 3).toArray()));
            complete.executeUpdate();
          }
        }
      }
    }
    assertThat(claims.get("walked").stream().mapToInt(List::size).sum())
        .as("jobs claimed")
        .isGreaterThan(400);
    assertThat(claims.get("walked")).containsExactlyElementsOf(claims.get("dealt"));
  }

  @Test
  void weightsShareTheClaimsWithinTwoPercent() throws Exception {
    fair("weighted", "{\"A\": 3}");
    insert("weighted", "A", 3_000, 0);
    insert("weighted", "B", 3_000, 0);
    insert("weighted", "C", 3_000, 0);
    Map<String, Integer> by = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      for (long id : claim("weighted", 7, null)) {
        by.merge(
            db.queryText("SELECT concurrency_key FROM pgbus.job WHERE id = ?", id),
            1,
            Integer::sum);
      }
    }
    // 700 claimed: 3:1:1 is 420, 140, 140.
    assertThat(by.get("A")).isBetween(406, 434);
    assertThat(by.get("B")).isBetween(133, 147);
    assertThat(by.get("C")).isBetween(133, 147);
  }

  @Test
  void equalTenantsAlternateEvenOneJobAtATime() throws Exception {
    fair("alternate", "{}");
    insert("alternate", "A", 100, 0);
    insert("alternate", "B", 100, 0);
    List<String> order = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long id = claim("alternate", 1, null).get(0);
      order.add(db.queryText("SELECT concurrency_key FROM pgbus.job WHERE id = ?", id));
    }
    for (int i = 0; i + 1 < order.size(); i += 2) {
      assertThat(order.subList(i, i + 2))
          .as("claims %s in %s", i, order)
          .containsExactlyInAnyOrder("A", "B");
    }
  }

  @Test
  void explainNamesWaitingForItsTurnForATenantServedAhead() throws Exception {
    fair("turns", "{\"A\": 2}");
    List<Long> a = insert("turns", "A", 3, 0);
    long b = insert("turns", "B", 1, 0).get(0);
    assertThat(claim("turns", 1, null)).containsExactly(a.get(0));
    String third = db.queryText("SELECT pgbus.explain(?)::text", a.get(2));
    assertThat(third)
        .contains("\"code\": \"waiting_for_turn\"")
        .contains("\"ahead\": 1")
        .contains("\"weight\": 2")
        .contains("pgbus.queue.turns.fair-weights");
    assertThat(db.queryText("SELECT pgbus.explain(?)::text", b)).doesNotContain("waiting_for_turn");
  }

  @Test
  void theKeyLimitStillHoldsInAFairQueue() throws Exception {
    db.queryText("SELECT pgbus.queue_limit_set('capped', key_concurrency => 2)");
    db.queryText("SELECT pgbus.queue_fair_set('capped', 'concurrency_key')");
    insert("capped", "A", 50, 0);
    insert("capped", "B", 50, 0);
    assertThat(claim("capped", 10, null)).hasSize(4);
    assertThat(claim("capped", 10, null)).isEmpty();
  }

  @Test
  void fifoPerKeyHoldsInAFairQueue() throws Exception {
    db.queryText("SELECT pgbus.queue_limit_set('fifo', key_fifo => true)");
    db.queryText("SELECT pgbus.queue_fair_set('fifo', 'concurrency_key')");
    List<Long> a = insert("fifo", "A", 3, 0);
    List<Long> b = insert("fifo", "B", 3, 0);
    assertThat(claim("fifo", 10, null)).containsExactlyInAnyOrder(a.get(0), b.get(0));
    assertThat(claim("fifo", 10, null)).isEmpty();
  }

  @Test
  void badFairSettingsAreRefusedInSqlNamingTheValue() {
    assertThatThrownBy(() -> db.queryText("SELECT pgbus.queue_fair_set('q', 'tenant_id')"))
        .rootCause()
        .hasMessageContaining("fair key 'tenant_id' for queue q is invalid")
        .hasMessageContaining("concurrency_key");
    assertThatThrownBy(
            () -> db.queryText("SELECT pgbus.queue_fair_set('q', 'concurrency_key', '{\"A\": 0}')"))
        .rootCause()
        .hasMessageContaining("fair weight A: 0 for queue q is invalid")
        .hasMessageContaining("1 to 1000");
    assertThatThrownBy(() -> db.queryText("SELECT pgbus.queue_fair_set('q', NULL, '{\"A\": 2}')"))
        .rootCause()
        .hasMessageContaining("need a fair key");
    assertThatThrownBy(
            () ->
                db.queryText(
                    "SELECT pgbus.queue_fair_set('q', 'concurrency_key',"
                        + " (SELECT jsonb_object_agg('t' || i, 1) FROM generate_series(1, 1001) i))"))
        .rootCause()
        .hasMessageContaining("name 1001 tenants, over the limit of 1000");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_limit")).isZero();
  }

  @Test
  void threeEnginesStartANewTenantsJobWithinAClaimRoundAndClaimNoJobTwice() throws Exception {
    String q = "tenants";
    insert(q, "A", BACKLOG, 0);
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    var duplicates = new AtomicInteger();
    startEngines(q, Map.of(), handled, duplicates);
    Await.until(
        "the engines to work the backlog", Duration.ofMinutes(2), () -> handled.size() >= 300);
    long b = insert(q, "B", 1, 0).get(0);
    Await.until("B's job to run", Duration.ofMinutes(2), () -> handled.contains(b));
    // The claims that took A's jobs after B's enqueue began and before B's own claim: each
    // engine's claim in flight when B's job committed (3), then at most one round (3) that did not
    // take it yet. Claims, not jobs: a claim takes up to a group of jobs per free slot.
    String between =
        " FROM pgbus.job WHERE queue = ? AND concurrency_key = 'A' AND attempt > 0"
            + " AND attempted_at >= (SELECT created_at FROM pgbus.job WHERE id = ?)"
            + " AND attempted_at < (SELECT attempted_at FROM pgbus.job WHERE id = ?)";
    long claims = db.queryLong("SELECT count(DISTINCT attempted_at)" + between, q, b, b);
    long jobs = db.queryLong("SELECT count(*)" + between, q, b, b);
    long waiting =
        db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = ? AND attempt = 0", q);
    System.out.printf(
        "[measure] fair share, 3 engines x 4 slots, A's backlog %d (%d still waiting): between"
            + " B's enqueue and B's claim, %d claims took %d of A's jobs%n",
        BACKLOG, waiting, claims, jobs);
    assertThat(claims).as("claims of A's jobs before B's").isLessThanOrEqualTo(6);
    assertThat(waiting).as("A's backlog still waiting").isGreaterThan(BACKLOG / 2);
    assertThat(duplicates).as("jobs run twice").hasValue(0);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = ? AND attempt > 1", q))
        .as("jobs claimed twice")
        .isZero();
  }

  @Test
  void threeEnginesHonourWeightsWithinFivePercent() throws Exception {
    String q = "weights";
    for (String t : List.of("A", "B", "C")) {
      insert(q, t, 2_000, 0);
    }
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    var duplicates = new AtomicInteger();
    startEngines(q, Map.of("A", 3), handled, duplicates);
    Await.until("1,500 jobs to run", Duration.ofMinutes(2), () -> handled.size() >= 1_500);
    // The first 1,000 claims in claim order (the limit row orders the fleet's claims).
    Map<String, Long> share = new HashMap<>();
    for (String t : List.of("A", "B", "C")) {
      share.put(
          t,
          db.queryLong(
              "SELECT count(*) FROM (SELECT concurrency_key FROM pgbus.job WHERE queue = ?"
                  + " AND attempt > 0 ORDER BY attempted_at, id LIMIT 1000) f"
                  + " WHERE concurrency_key = ?",
              q,
              t));
    }
    System.out.printf("[measure] fair share 3:1:1 over 3 engines, first 1000 claims: %s%n", share);
    assertThat(share.get("A")).isBetween(550L, 650L);
    assertThat(share.get("B")).isBetween(150L, 250L);
    assertThat(share.get("C")).isBetween(150L, 250L);
    assertThat(duplicates).as("jobs run twice").hasValue(0);
  }

  private void startEngines(
      String q, Map<String, Integer> weights, Set<Long> handled, AtomicInteger duplicates) {
    for (int e = 0; e < 3; e++) {
      EngineConfig config =
          engines
              .config()
              .capsule("main", 4, q)
              .queueLimit(new QueueLimit(q, null, 100_000))
              .fairShare(new FairShare(q, weights))
              .build();
      engines.start(
          config,
          (job, tx) -> {
            if (!handled.add(job.id())) {
              duplicates.incrementAndGet();
            }
            Thread.sleep(1);
            return Outcome.complete();
          });
    }
  }

  /** Makes the queue fair, with room for 100000 running jobs per tenant. */
  static void fair(String queue, String weights) {
    db.queryText("SELECT pgbus.queue_limit_set(?, key_concurrency => 100000)", queue);
    db.queryText("SELECT pgbus.queue_fair_set(?, 'concurrency_key', ?::jsonb)", queue, weights);
  }

  /** n due jobs of one tenant, enqueued now in id order; their ids. */
  static List<Long> insert(String queue, String tenant, int n, int priority) {
    return db.queryLongs(
        "INSERT INTO pgbus.job (queue, payload, concurrency_key, priority)"
            + " SELECT ?, jsonb_build_object('n', i), ?, ? FROM generate_series(1, ?) AS i"
            + " RETURNING id",
        queue,
        tenant,
        priority,
        n);
  }

  /** One claim, committed; its plans in {@code plans} when not null. */
  static List<Long> claim(String queue, int take, List<JsonObject> plans) throws SQLException {
    try (Connection c = db.connect()) {
      if (plans != null) {
        AutoExplain.on(c);
      }
      List<Long> ids = new ArrayList<>();
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT id FROM pgbus.claim(ARRAY[?], ?, 'fair-test', interval '5 minutes')")) {
        ps.setString(1, queue);
        ps.setInt(2, take);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
        if (plans != null) {
          plans.addAll(AutoExplain.plans(ps.getWarnings()));
        }
      }
      return ids;
    }
  }

  /** The scans of pgbus.job in a plan. */
  private static List<JsonObject> scans(JsonObject node) {
    List<JsonObject> out = new ArrayList<>();
    if ("job".equals(node.getString("Relation Name", ""))
        && node.getString("Node Type").contains("Scan")) {
      out.add(node);
    }
    JsonArray children = node.getJsonArray("Plans");
    if (children != null) {
      for (JsonValue v : children) {
        out.addAll(scans(v.asJsonObject()));
      }
    }
    return out;
  }
}

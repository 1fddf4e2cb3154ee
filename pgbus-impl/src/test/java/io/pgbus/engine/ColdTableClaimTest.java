package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.AutoExplain;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.TestDatabase;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #15, "a cold table under a burst": a fresh install's first big burst lands in a {@code
 * pgbus.job} that autovacuum has not analyzed yet. The claim's plan must not depend on statistics:
 * it walks {@code job_claim_idx} in claim order and never reads and sorts the backlog.
 *
 * <p>The plans are those of {@code pgbus.claim} itself, not of a copy of its SQL: auto_explain with
 * {@code log_nested_statements} sends the plan of every statement the function runs to this session
 * as a NOTICE (JSON, with actual row counts). The tests run in order: first against the
 * never-analyzed table, then after ANALYZE, and the claim latency of both is recorded as a ratio.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ColdTableClaimTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final int BACKLOG = 100_000;
  private static final int BATCH = 10;
  private static final int TIMED_CLAIMS = 30;
  private static final Set<String> SCANS =
      Set.of("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan", "Bitmap Index Scan");

  private static double coldMillisPerClaim;

  @Test
  @Order(1)
  void aNeverAnalyzedBacklogIsClaimedByAnOrderedIndexScanWithoutASort() throws Exception {
    db.update("ALTER TABLE pgbus.job SET (autovacuum_enabled = false)");
    db.update(
        "INSERT INTO pgbus.job (queue, payload) SELECT 'burst', jsonb_build_object('n', i)"
            + " FROM generate_series(1, ?) AS i",
        BACKLOG);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_statistic WHERE starelid = 'pgbus.job'::regclass::oid"))
        .as("statistics of pgbus.job: the table must never have been analyzed")
        .isZero();
    List<Long> firstIds = db.queryLongs("SELECT id FROM pgbus.job ORDER BY id LIMIT ?", BATCH);

    List<JsonObject> plans = new ArrayList<>();
    List<Long> claimed = claimExplained(plans);

    assertThat(claimed).containsExactlyElementsOf(firstIds);
    assertOrderedIndexScanWithoutSort(plans);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_statistic WHERE starelid = 'pgbus.job'::regclass::oid"))
        .as("still never analyzed after the claim")
        .isZero();
    coldMillisPerClaim = millisPerClaim();
  }

  @Test
  @Order(2)
  void anAnalyzedBacklogIsClaimedTheSameWayAndAboutAsFast() throws Exception {
    if (coldMillisPerClaim == 0) {
      aNeverAnalyzedBacklogIsClaimedByAnOrderedIndexScanWithoutASort();
    }
    db.update("ANALYZE pgbus.job");
    List<JsonObject> plans = new ArrayList<>();
    assertThat(claimExplained(plans)).hasSize(BATCH);
    assertOrderedIndexScanWithoutSort(plans);

    double analyzed = millisPerClaim();
    Measurements.record(
        "claim of " + BATCH + " from a " + BACKLOG + "-job backlog, ms: never analyzed",
        coldMillisPerClaim);
    Measurements.record("claim, ms: analyzed", analyzed);
    Measurements.record("claim latency, never analyzed / analyzed", coldMillisPerClaim / analyzed);
  }

  /**
   * Claims BATCH jobs in a transaction that commits, with the function's plans in {@code plans}.
   */
  private static List<Long> claimExplained(List<JsonObject> plans) throws SQLException {
    try (Connection c = db.connect()) {
      AutoExplain.on(c);
      c.setAutoCommit(false);
      List<Long> ids = new ArrayList<>();
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT id FROM pgbus.claim(ARRAY['burst'], ?, 'cold-test', interval '5 minutes')")) {
        ps.setInt(1, BATCH);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
          }
        }
        plans.addAll(AutoExplain.plans(ps.getWarnings()));
      }
      c.commit();
      return ids;
    }
  }

  private static double millisPerClaim() throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT count(*) FROM pgbus.claim(ARRAY['burst'], ?, 'cold-test', interval '5 minutes')")) {
      ps.setInt(1, BATCH);
      long[] nanos = new long[TIMED_CLAIMS];
      for (int i = 0; i < TIMED_CLAIMS; i++) {
        long t0 = System.nanoTime();
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getLong(1)).isEqualTo(BATCH);
        }
        nanos[i] = System.nanoTime() - t0;
      }
      Arrays.sort(nanos);
      return nanos[TIMED_CLAIMS / 2] / 1e6;
    }
  }

  /**
   * Every scan of pgbus.job in the claim's statements is an index scan, the claim itself reads
   * job_claim_idx under its row locks, and no Sort node has a scan of pgbus.job below it (the one
   * Sort the function has orders the at most BATCH rows it just updated, through a CTE).
   */
  private static void assertOrderedIndexScanWithoutSort(List<JsonObject> plans) {
    List<JsonObject> jobPlans =
        plans.stream().filter(p -> p.getString("Query Text", "").contains("pgbus.job")).toList();
    assertThat(jobPlans).as("plans of the claim's statements over pgbus.job").isNotEmpty();
    boolean lockedClaimIdxScan = false;
    for (JsonObject p : jobPlans) {
      JsonObject root = p.getJsonObject("Plan");
      for (JsonObject scan : nodes(root, n -> SCANS.contains(n.getString("Node Type")))) {
        if ("job".equals(scan.getString("Relation Name", ""))) {
          assertThat(scan.getString("Node Type"))
              .as("scan of pgbus.job in %s", p)
              .isIn("Index Scan", "Index Only Scan");
          assertThat(scan.getString("Index Name")).isIn("job_claim_idx", "job_pkey");
        }
      }
      for (JsonObject sort : nodes(root, n -> "Sort".equals(n.getString("Node Type")))) {
        assertThat(readsJob(sort)).as("a Sort over pgbus.job in %s", p).isFalse();
      }
      for (JsonObject lock : nodes(root, n -> "LockRows".equals(n.getString("Node Type")))) {
        JsonObject below = lock.getJsonArray("Plans").getJsonObject(0);
        lockedClaimIdxScan |=
            "Index Scan".equals(below.getString("Node Type"))
                && "job_claim_idx".equals(below.getString("Index Name", ""));
      }
    }
    assertThat(lockedClaimIdxScan)
        .as("LockRows directly over an Index Scan of job_claim_idx, in %s", jobPlans)
        .isTrue();
  }

  /** Whether a scan of pgbus.job feeds this node, not counting CTEs and subplans it only uses. */
  private static boolean readsJob(JsonObject node) {
    if ("job".equals(node.getString("Relation Name", ""))) {
      return true;
    }
    JsonArray children = node.getJsonArray("Plans");
    if (children == null) {
      return false;
    }
    for (JsonValue v : children) {
      JsonObject child = v.asJsonObject();
      String rel = child.getString("Parent Relationship", "");
      if (!rel.equals("InitPlan") && !rel.equals("SubPlan") && readsJob(child)) {
        return true;
      }
    }
    return false;
  }

  private static List<JsonObject> nodes(
      JsonObject node, java.util.function.Predicate<JsonObject> which) {
    List<JsonObject> out = new ArrayList<>();
    if (which.test(node)) {
      out.add(node);
    }
    JsonArray children = node.getJsonArray("Plans");
    if (children != null) {
      for (JsonValue v : children) {
        out.addAll(nodes(v.asJsonObject(), which));
      }
    }
    return out;
  }
}

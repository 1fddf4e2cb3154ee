package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.AutoExplain;
import io.pgbus.engine.testing.TestDatabase;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
  void weightsShareTheClaimsWithinTwoPercent() throws Exception {
    fair("weighted", "{\"A\": 3}");
    insert("weighted", "A", 3_000, 0);
    insert("weighted", "B", 3_000, 0);
    insert("weighted", "C", 3_000, 0);
    Map<String, Integer> by = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      for (long id : claim("weighted", 7, null)) {
        by.merge(db.queryText("SELECT concurrency_key FROM pgbus.job WHERE id = ?", id), 1, Integer::sum);
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
      assertThat(order.subList(i, i + 2)).as("claims %s in %s", i, order).containsExactlyInAnyOrder("A", "B");
    }
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
    assertThatThrownBy(
            () -> db.queryText("SELECT pgbus.queue_fair_set('q', NULL, '{\"A\": 2}')"))
        .rootCause()
        .hasMessageContaining("need a fair key");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_limit")).isZero();
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
        queue, tenant, priority, n);
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

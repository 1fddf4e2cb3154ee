package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.DeployCheck.Finding;
import io.pgbus.engine.DeployCheck.Kind;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The deploy gate on a live database: each finding appears when its cause is there, and only then.
 */
class DeployCheckTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach("pgbus.job", "pgbus.node", "pgbus.schedule", "pgbus.queue_limit");

  // This build's handlers: orders takes {"orderId": <number>}.
  private static final Set<String> HANDLED = Set.of("orders");
  private static final DeployCheck.PayloadReader READER =
      (queue, payload) ->
          payload.matches("\\{\"orderId\": [0-9]+}") ? null : "no orderId in " + payload;

  private static final EngineConfig CONFIG =
      EngineConfig.builder().workerId("new-build").capsule("main", 2, "orders").build();

  @Test
  void aDatabaseWithNothingWaitingHasNoFindings() throws Exception {
    assertThat(check(CONFIG)).isEmpty();
  }

  @Test
  void aQueueWithWaitingJobsAndNeitherAHandlerNorALiveReaderBlocks() throws Exception {
    db.queryLong("SELECT pgbus.enqueue('legacy', '{}')");
    db.queryLong("SELECT pgbus.enqueue('orders', '{\"orderId\": 1}')");
    // A completed job waits for nothing.
    db.update(
        "UPDATE pgbus.job SET state = 'completed', finalized_at = now() WHERE queue = 'orders'");

    List<Finding> found = check(CONFIG);

    assertThat(found)
        .extracting(Finding::kind, Finding::queue)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(Kind.UNHANDLED_QUEUE, "legacy"));
    assertThat(found.get(0).blocking()).isTrue();
    assertThat(found.get(0).detail()).contains("@Handles(\"legacy\")");
  }

  @Test
  void aLiveReaderElsewhereCoversAQueueAndAStaleOneDoesNot() throws Exception {
    db.queryLong("SELECT pgbus.enqueue('legacy', '{}')");
    node("stale-old-build", 3_600_000, "legacy");
    assertThat(check(CONFIG)).extracting(Finding::kind).containsExactly(Kind.UNHANDLED_QUEUE);

    node("live-old-build", 0, "legacy");

    assertThat(check(CONFIG)).isEmpty();
  }

  @Test
  void waitingPayloadsThatDoNotMapOntoTheHandlersTypeBlock() throws Exception {
    db.queryLong("SELECT pgbus.enqueue('orders', '{\"orderId\": 1}')");
    long bad = db.queryLong("SELECT pgbus.enqueue('orders', '{\"sku\": \"x\"}')");

    List<Finding> found = check(CONFIG);

    assertThat(found).extracting(Finding::kind).containsExactly(Kind.PAYLOAD_MISMATCH);
    assertThat(found.get(0).detail())
        .contains("1 of the next 2 waiting payloads of queue 'orders'")
        .contains("job " + bad + ": no orderId");
  }

  @Test
  void anEnabledScheduleWhoseQueueHasNoHandlerBlocksAndAPausedOneDoesNot() throws Exception {
    db.update(
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
            + " VALUES ('nightly', '@daily', 'UTC', 'reports', '{}', 'api')");
    db.update(
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, paused)"
            + " VALUES ('old', '@daily', 'UTC', 'retired', '{}', 'api', true)");
    db.update(
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
            + " VALUES ('daily-orders', '@daily', 'UTC', 'orders', '{}', 'api')");

    List<Finding> found = check(CONFIG);

    assertThat(found)
        .extracting(Finding::kind, Finding::queue)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(Kind.SCHEDULE_WITHOUT_HANDLER, "reports"));
    assertThat(found.get(0).detail()).contains("schedule 'nightly'");
  }

  @Test
  void limitsAndThePayloadLimitThisBuildChangesAreListedAndNeverBlock() throws Exception {
    EngineConfig limited =
        EngineConfig.builder()
            .workerId("new-build")
            .capsule("main", 2, "orders")
            .queueLimit(new QueueLimit("orders", 5, null))
            .maxPayloadBytes(4096)
            .build();
    long stored = db.queryLong("SELECT max_payload_bytes FROM pgbus.setting");

    List<Finding> found = check(limited);

    assertThat(found).extracting(Finding::kind).containsOnly(Kind.CONFIG_CHANGE);
    assertThat(found)
        .extracting(Finding::detail)
        .containsExactly(
            "queue 'orders' limits: database none, this build global 5",
            "payload limit (pgbus.max-payload-bytes): database "
                + stored
                + " bytes, this build 4096");
    assertThat(DeployCheck.blocking(found)).isEmpty();

    db.queryLong("SELECT 1 FROM pgbus.queue_limit_set('orders', global_concurrency => 5)");
    db.update("UPDATE pgbus.setting SET max_payload_bytes = 4096");
    try {
      assertThat(check(limited)).isEmpty();
      assertThat(check(CONFIG))
          .extracting(Finding::detail)
          .contains("queue 'orders' limits: database global 5, this build none");
    } finally {
      db.update("UPDATE pgbus.setting SET max_payload_bytes = ?", (int) stored);
    }
  }

  @Test
  void aFairShareThisBuildChangesIsListedWithItsWeights() throws Exception {
    EngineConfig fair =
        EngineConfig.builder()
            .workerId("new-build")
            .capsule("main", 2, "tenants")
            .fairShare(new FairShare("tenants", Map.of("b", 3, "a", 2)))
            .build();

    assertThat(check(fair))
        .extracting(Finding::detail)
        .contains(
            "queue 'tenants' limits: database none, this build fair by concurrency-key, weights"
                + " a:2, b:3");

    db.queryText("SELECT pgbus.queue_fair_set('tenants', 'concurrency_key', '{\"a\": 2}')");
    try {
      assertThat(check(fair))
          .extracting(Finding::detail)
          .contains(
              "queue 'tenants' limits: database fair by concurrency-key, weights a:2, this build"
                  + " fair by concurrency-key, weights a:2, b:3");
      db.queryText(
          "SELECT pgbus.queue_fair_set('tenants', 'concurrency_key', '{\"b\": 3, \"a\": 2}')");
      assertThat(check(fair)).extracting(Finding::detail).noneMatch(d -> d.contains("tenants"));
      // The doctor's flow-control line names it too.
      try (Connection c = db.connect()) {
        assertThat(Doctor.limited(c).detail())
            .contains(
                "tenants (global none, per key 1, fair by concurrency-key, weights a:2, b:3:");
      }
    } finally {
      db.queryText("SELECT pgbus.queue_fair_set('tenants', NULL)");
      db.update("DELETE FROM pgbus.queue_limit WHERE queue = 'tenants'");
    }
  }

  private static List<Finding> check(EngineConfig config) throws Exception {
    try (Connection c = db.connect()) {
      return DeployCheck.run(c, config, HANDLED, READER);
    }
  }

  // An engine's row: seen secondsAgo ago with a 30 s TTL, no listener (alive only while beating).
  private static void node(String worker, long seenAgoMs, String queue) {
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " capsules, heartbeat_ttl_ms) VALUES (?, 'h', 1, now(), now() - ?::float8 *"
            + " interval '1 millisecond', 'delivering', 'notify', ?::jsonb, 30000)",
        worker,
        (double) seenAgoMs,
        "[{\"name\":\"main\",\"queues\":[\"" + queue + "\"],\"concurrency\":1}]");
  }

  @Test
  void theDoctorShowsBlockingFindingsAsFailOnlyUnderFailAndAConfigChangeAsWarn() {
    var unhandled = new Finding(Kind.UNHANDLED_QUEUE, "legacy", "queue 'legacy' has waiting jobs");
    var change = new Finding(Kind.CONFIG_CHANGE, "orders", "queue 'orders' limits: ...");

    assertThat(DeployCheck.check(List.of(), DeployCheck.Mode.FAIL).status())
        .isEqualTo(Doctor.Status.OK);
    assertThat(DeployCheck.check(List.of(unhandled, change), DeployCheck.Mode.FAIL).status())
        .isEqualTo(Doctor.Status.FAIL);
    assertThat(DeployCheck.check(List.of(unhandled), DeployCheck.Mode.WARN).status())
        .isEqualTo(Doctor.Status.WARN);
    Doctor.Check changeOnly = DeployCheck.check(List.of(change), DeployCheck.Mode.FAIL);
    assertThat(changeOnly.status()).isEqualTo(Doctor.Status.WARN);
    assertThat(changeOnly.fix()).contains("newest build");
    assertThat(unhandled.summary()).isEqualTo("unhandled queue 'legacy'");
  }
}

package io.pgbus.jakarta.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.AuditEntry;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.admin.Explanation;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.admin.QueueBlockers;
import io.pgbus.admin.Reason;
import io.pgbus.engine.FairShare;
import io.pgbus.engine.NodeStore;
import io.pgbus.engine.QueueLimitStatus;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The admin API's records as JSON-B (Yasson, as on both servers) writes them, byte for byte: the
 * property order, which nulls are written and which left out, and the number formats that the
 * console and docs/admin-api.md expect. Each expected text is what the hand-built maps wrote before
 * the records replaced them (issue #24).
 */
class AdminJsonTest {

  private static final Jsonb JSONB = JsonbBuilder.create();
  private static final Instant AT = Instant.parse("2026-12-01T03:14:00Z");

  @AfterAll
  static void close() throws Exception {
    JSONB.close();
  }

  private static String json(Object o) {
    return JSONB.toJson(o);
  }

  private static JobView job(Long batchId) {
    return new JobView(
        1042,
        "payments",
        JobState.DEAD,
        0,
        25,
        25,
        AT,
        AT,
        null,
        AT,
        "host:1234",
        null,
        null,
        "alice",
        null,
        "java.io.IOException: boom",
        "{\"order\": 42}",
        "[]",
        null,
        null,
        batchId,
        null);
  }

  @Test
  void aSearchedJobWritesEveryFieldInOrderWithItsNulls() {
    assertThat(json(JobsResource.JobJson.of(job(null), false)))
        .isEqualTo(
            "{\"id\":\"1042\",\"queue\":\"payments\",\"state\":\"dead\",\"priority\":0,"
                + "\"attempt\":25,\"maxAttempts\":25,\"runAt\":\"2026-12-01T03:14:00Z\","
                + "\"createdAt\":\"2026-12-01T03:14:00Z\",\"attemptedAt\":null,"
                + "\"finalizedAt\":\"2026-12-01T03:14:00Z\",\"attemptedBy\":\"host:1234\","
                + "\"leaseExpiresAt\":null,\"uniqueKey\":null,\"enqueuedBy\":\"alice\","
                + "\"correlationId\":null,\"lastError\":\"java.io.IOException: boom\","
                + "\"progress\":null,\"attemptsBeforeReplay\":0}");
    assertThat(json(new JobsResource.PageJson(List.of(), null)))
        .isEqualTo("{\"jobs\":[],\"next\":null}");
  }

  @Test
  void oneJobMaskedForAViewerWritesItsPayloadErrorsAndResultAsNull() {
    String masked = json(JobsResource.JobDetailJson.of(job(7L), true));
    assertThat(masked)
        .contains("\"lastError\":null,\"progress\":null,")
        .endsWith(
            ",\"payload\":null,\"payloadMasked\":true,\"errors\":null,\"result\":null,"
                + "\"batchId\":\"7\",\"dependencies\":null,\"attemptsBeforeReplay\":0,"
                + "\"startBy\":null,\"expired\":null,\"workflowId\":null}")
        .doesNotContain("order");
    assertThat(json(JobsResource.JobDetailJson.of(job(null), false)))
        .endsWith(
            ",\"payload\":\"{\\\"order\\\": 42}\",\"payloadMasked\":false,\"errors\":\"[]\","
                + "\"result\":null,\"batchId\":null,\"dependencies\":null,"
                + "\"attemptsBeforeReplay\":0,\"startBy\":null,\"expired\":null,\"workflowId\":null}");
  }

  @Test
  void errorsLeaveOutTheFieldAndMessageTheyHaveNot() {
    assertThat(json(new Problem("forbidden", null, null))).isEqualTo("{\"error\":\"forbidden\"}");
    assertThat(json(new Problem("not-found", "id", null)))
        .isEqualTo("{\"error\":\"not-found\",\"field\":\"id\"}");
    assertThat(json(new Problem("bad-request", "state", "use one")))
        .isEqualTo("{\"error\":\"bad-request\",\"field\":\"state\",\"message\":\"use one\"}");
  }

  @Test
  void aQueueWritesItsCountsInStateOrderAndANullLimit() {
    var queue =
        new QueuesResource.QueueJson(
            "mail",
            QueuesResource.CountsJson.of(Map.of(JobState.DEAD, 2L, JobState.AVAILABLE, 12L)),
            List.of("completed"),
            List.of("dead"),
            5300,
            false,
            null,
            List.of(new QueuesResource.ReaderJson("main", "host:1")));
    assertThat(json(new QueuesResource.QueuesJson(1000, List.of(queue))))
        .isEqualTo(
            "{\"countCap\":1000,\"queues\":[{\"queue\":\"mail\",\"counts\":{\"scheduled\":0,"
                + "\"available\":12,\"running\":0,\"retryable\":0,\"completed\":0,\"dead\":2,"
                + "\"cancelled\":0},\"countsCapped\":[\"completed\"],\"countsEstimated\":[\"dead\"],"
                + "\"oldestWaitingMs\":5300,"
                + "\"paused\":false,\"limit\":null,\"readers\":[{\"capsule\":\"main\","
                + "\"worker\":\"host:1\"}]}]}");
  }

  @Test
  void aLimitWritesFifoAndRateFieldsOnlyWhenTheQueueHasThem() {
    assertThat(json(QueuesResource.LimitJson.of(new QueueLimitStatus("q", null, 1, 5, 7, 0))))
        .isEqualTo(
            "{\"globalConcurrency\":null,\"keyConcurrency\":1,\"running\":5,"
                + "\"waitingOnLimit\":7,\"waitingOnWorker\":0}");
    var both = new QueueLimitStatus("q", 5, 2, 1, 3, 4, 10, Duration.ofSeconds(1), 6, true, false);
    assertThat(json(QueuesResource.LimitJson.of(both)))
        .isEqualTo(
            "{\"globalConcurrency\":5,\"keyConcurrency\":2,\"keyFifo\":true,"
                + "\"keyFifoSkipDead\":false,\"running\":1,\"waitingOnLimit\":3,"
                + "\"waitingOnWorker\":4,\"rateLimit\":10,\"rateWindowMs\":1000,"
                + "\"startsInWindow\":6}");
  }

  @Test
  void theLimitCardNamesTheFairShareOrNullsIt() {
    var limit = new QueueLimitResource.LimitValuesJson(5, null, null, null, false, false);
    assertThat(
            json(
                QueueLimitResource.LimitStateJson.of(
                    "q", limit, new FairShare("q", Map.of("b", 3, "a", 2)), List.of())))
        .isEqualTo(
            "{\"queue\":\"q\",\"limit\":{\"globalConcurrency\":5,\"keyConcurrency\":null,"
                + "\"rateLimit\":null,\"rateWindowMs\":null,\"keyFifo\":false,"
                + "\"keyFifoSkipDead\":false},\"fairKey\":\"concurrency-key\","
                + "\"fairWeights\":{\"a\":2,\"b\":3},\"history\":[]}");
    assertThat(json(QueueLimitResource.LimitStateJson.of("q", null, null, List.of())))
        .isEqualTo(
            "{\"queue\":\"q\",\"limit\":null,\"fairKey\":null,\"fairWeights\":null,"
                + "\"history\":[]}");
  }

  @Test
  void aPauseAndTheThroughputKeepTheirFields() {
    assertThat(json(new QueuesResource.PauseJson("mail", "pause", true, true)))
        .isEqualTo("{\"queue\":\"mail\",\"action\":\"pause\",\"changed\":true,\"paused\":true}");
    assertThat(
            json(
                new QueuesResource.ThroughputJson(
                    60,
                    List.of(
                        QueuesResource.PointJson.of(
                            new io.pgbus.admin.Throughput("mail", AT, 812, 1))))))
        .isEqualTo(
            "{\"windowMinutes\":60,\"points\":[{\"queue\":\"mail\","
                + "\"minute\":\"2026-12-01T03:14:00Z\",\"completed\":812,\"dead\":1}]}");
    assertThat(json(new JobsResource.ChangedJson("replay", 3)))
        .isEqualTo("{\"action\":\"replay\",\"changed\":3}");
  }

  @Test
  void aScheduleWritesItsNullsAndItsHistoryOnlyWhereThereIsOne() {
    var s =
        new Schedule(
            ScheduleDefinition.of("nightly", "0 3 * * *", "reports"),
            false,
            null,
            AT,
            "api",
            AT,
            "alice");
    String fields =
        "{\"name\":\"nightly\",\"cron\":\"0 3 * * *\",\"zone\":\"UTC\",\"queue\":\"reports\","
            + "\"payload\":null,\"payloadMasked\":true,\"priority\":0,\"maxAttempts\":null,"
            + "\"misfire\":\"run_once\",\"catchUpLimit\":null,\"overlap\":\"allow\","
            + "\"paused\":false,\"lastRun\":null,\"lastJobId\":null,\"lastOutcome\":null,"
            + "\"nextRun\":\"2026-12-01T03:14:00Z\",\"source\":\"api\","
            + "\"updatedAt\":\"2026-12-01T03:14:00Z\",\"updatedBy\":\"alice\",\"error\":null,"
            + "\"problem\":null";
    assertThat(json(SchedulesResource.ScheduleJson.of(s, true, null))).isEqualTo(fields + "}");
    var history =
        List.of(
            SchedulesResource.HistoryJson.of(
                new AuditEntry(1, AT, "jane", "schedule_pause", "reports", null)));
    assertThat(json(SchedulesResource.ScheduleJson.of(s, true, history)))
        .isEqualTo(
            fields
                + ",\"history\":[{\"at\":\"2026-12-01T03:14:00Z\",\"actor\":\"jane\","
                + "\"action\":\"schedule_pause\",\"queue\":\"reports\",\"jobId\":null}]}");
    assertThat(json(new SchedulesResource.PageJson(List.of(), null)))
        .isEqualTo("{\"schedules\":[],\"next\":null}");
  }

  @Test
  void aScheduleActionNamesTheJobOnlyForATrigger() {
    assertThat(json(new SchedulesResource.ActionJson("nightly", "pause", null, true)))
        .isEqualTo("{\"name\":\"nightly\",\"action\":\"pause\",\"changed\":true}");
    assertThat(json(new SchedulesResource.ActionJson("nightly", "trigger", "42", true)))
        .isEqualTo(
            "{\"name\":\"nightly\",\"action\":\"trigger\",\"jobId\":\"42\",\"changed\":true}");
  }

  @Test
  void theFleetWritesAFreeLeaseAndUnknownValuesAsNull() {
    var node =
        new NodeStore.Node(
            "host-a:1",
            "host-a",
            null,
            AT,
            AT,
            "delivering",
            "notify",
            false,
            List.of(new NodeStore.NodeCapsule("main", List.of("payments"), 8)),
            null,
            true);
    var fleet =
        new FleetResource.FleetJson(
            null,
            List.of(new FleetResource.ListenerJson(4711, null, null)),
            List.of(FleetResource.NodeJson.of(node, null)),
            new FleetResource.SelfJson(
                "host-b:99",
                false,
                "delivering",
                "notify",
                List.of(new FleetResource.CapsuleJson("main", List.of("payments"), 8, 2))));
    assertThat(json(fleet))
        .isEqualTo(
            "{\"leader\":null,\"listeners\":[{\"pid\":4711,\"clientAddress\":null,"
                + "\"since\":null}],\"nodes\":[{\"worker\":\"host-a:1\",\"host\":\"host-a\","
                + "\"pid\":null,\"connected\":false,\"leader\":false,\"listener\":\"delivering\","
                + "\"mode\":\"notify\",\"startedAt\":\"2026-12-01T03:14:00Z\","
                + "\"seenAt\":\"2026-12-01T03:14:00Z\",\"heartbeatTtl\":null,\"alive\":true,"
                + "\"capsules\":[{\"name\":\"main\",\"queues\":[\"payments\"],"
                + "\"concurrency\":8}]}],\"self\":{\"worker\":\"host-b:99\",\"leader\":false,"
                + "\"listener\":\"delivering\",\"mode\":\"notify\",\"capsules\":[{\"name\":"
                + "\"main\",\"queues\":[\"payments\"],\"concurrency\":8,\"inFlight\":2}]}}");
    assertThat(json(new AdminResource.CsrfJson("X-Pgbus-CSRF", "t")))
        .isEqualTo("{\"header\":\"X-Pgbus-CSRF\",\"token\":\"t\"}");
  }

  @Test
  void anExplanationWritesItsReasonsInOrderWithTheirNullsAndMasksErrors() {
    var e =
        new Explanation(
            1042,
            "payments",
            JobState.RETRYABLE,
            List.of(
                new Reason(
                    Reason.RETRY_BACKOFF,
                    "Job 1042 failed attempt 1 of 25.",
                    "{\"attempt\": 1}",
                    "Wait.",
                    AT,
                    "boom"),
                new Reason(Reason.QUEUE_PAUSED, "Paused.", "{}", null, null, null)));
    String reasons =
        "\"reasons\":[{\"code\":\"retry_backoff\",\"sentence\":\"Job 1042 failed attempt 1 of 25.\","
            + "\"evidence\":\"{\\\"attempt\\\": 1}\",\"action\":\"Wait.\","
            + "\"resolvesAt\":\"2026-12-01T03:14:00Z\",\"error\":%s},"
            + "{\"code\":\"queue_paused\",\"sentence\":\"Paused.\",\"evidence\":\"{}\","
            + "\"action\":null,\"resolvesAt\":null,\"error\":null}]}";
    assertThat(json(JobsResource.ExplanationJson.of(e)))
        .isEqualTo(
            "{\"job\":\"1042\",\"queue\":\"payments\",\"state\":\"retryable\","
                + reasons.formatted("\"boom\""));
    assertThat(json(JobsResource.ExplanationJson.of(e.withoutErrors())))
        .endsWith(reasons.formatted("null"));
  }

  @Test
  void queueBlockersWriteTheirCausesInTheirOrder() {
    var causes = new java.util.LinkedHashMap<String, Long>();
    causes.put(Reason.DUE_LATER, 3L);
    causes.put(Reason.QUEUE_PAUSED, 2L);
    var b = new QueueBlockers("payments", 5, 0, causes);
    assertThat(json(new QueuesResource.BlockersJson(List.of(QueuesResource.BlockerJson.of(b)))))
        .isEqualTo(
            "{\"queues\":[{\"queue\":\"payments\",\"waiting\":5,\"runnableNow\":0,"
                + "\"blockedBy\":{\"due_later\":3,\"queue_paused\":2}}]}");
  }

  @Test
  void aWorkflowWritesItsNodesAndEdgesWithTheirNulls() {
    var g =
        new io.pgbus.engine.WorkflowGraph.Graph(
            5,
            "order-42",
            AT,
            "alice",
            "running",
            new io.pgbus.engine.WorkflowGraph.Counts(2, 1, 3, 0, 1),
            List.of(
                new io.pgbus.engine.WorkflowGraph.Member(41, "charge", "payments", "completed"),
                new io.pgbus.engine.WorkflowGraph.Member(43, null, "mail", null)),
            List.of(
                new io.pgbus.engine.WorkflowGraph.Link(
                    41, 42, "success", null, "completed", "cancel"),
                new io.pgbus.engine.WorkflowGraph.Link(
                    41, 44, "result", "($.\"ok\" == true)", "not_taken", "cancel")),
            false);
    assertThat(json(WorkflowsResource.WorkflowJson.of(g)))
        .isEqualTo(
            "{\"id\":\"5\",\"name\":\"order-42\",\"createdAt\":\"2026-12-01T03:14:00Z\","
                + "\"createdBy\":\"alice\",\"state\":\"running\",\"counts\":{\"waiting\":2,"
                + "\"running\":1,\"completed\":3,\"dead\":0,\"cancelled\":1},\"nodes\":["
                + "{\"job\":\"41\",\"node\":\"charge\",\"queue\":\"payments\",\"state\":"
                + "\"completed\"},{\"job\":\"43\",\"node\":null,\"queue\":\"mail\","
                + "\"state\":null}],\"edges\":[{\"from\":\"41\",\"to\":\"42\",\"kind\":"
                + "\"success\",\"predicate\":null,\"state\":\"completed\",\"onFailure\":"
                + "\"cancel\"},{\"from\":\"41\",\"to\":\"44\",\"kind\":\"result\","
                + "\"predicate\":\"($.\\\"ok\\\" == true)\",\"state\":\"not_taken\","
                + "\"onFailure\":\"cancel\"}],\"more\":false}");
  }
}

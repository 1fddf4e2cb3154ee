package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueuedWorkflow;
import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.Workflow;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Workflows (V52, R__workflow.sql): failure and result branches, several parents, a whole
 * workflow's cancel and retry, fan-out joining the workflow, the DAG's bounds on the Java and the
 * SQL path, and several engines running each node once.
 */
class WorkflowTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Jobs jobs = new Jobs("workflow-test", 1 << 20, JobTracing.NONE);

  /** Handled job ids in the order their handlers started. */
  private final List<Long> ran = new CopyOnWriteArrayList<>();

  private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final Set<Long> failing = ConcurrentHashMap.newKeySet();
  private final Map<Long, Long> seenWorkflow = new ConcurrentHashMap<>();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.job_dependency");
    db.update("DELETE FROM pgbus.workflow");
  }

  /** The handler: payload {"fail":true} or a failing id dies; {"result":...} is its result. */
  private Outcome handle(RunningJob job, Connection tx) throws Exception {
    job.workflowId().ifPresent(w -> seenWorkflow.put(job.id(), w));
    runs.computeIfAbsent(job.id(), k -> new AtomicInteger()).incrementAndGet();
    ran.add(job.id());
    String p = job.payload();
    if (failing.contains(job.id())) {
      throw new IllegalStateException("job " + job.id() + " fails");
    }
    if (p.contains("\"stall\"")) {
      while (!job.cancellationRequested()) {
        Thread.sleep(10);
      }
      throw new InterruptedException("cancelled");
    }
    if (p.contains("\"fanout\"")) {
      Long w = job.workflowId().isPresent() ? job.workflowId().getAsLong() : null;
      jobs.enqueue(
          tx, NewJob.of(job.queue(), "{\"child\":true}").withParent(job.id()).inWorkflow(w));
    }
    int r = p.indexOf("\"result\":");
    if (r >= 0) {
      return Outcome.completeJson(p.substring(r + 9, p.lastIndexOf('}')));
    }
    return Outcome.complete();
  }

  private void startEngines(int count, String... queues) {
    for (int i = 0; i < count; i++) {
      engines.start(
          engines
              .builder(
                  engines
                      .config()
                      .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), 0))
                      .capsule(new CapsuleConfig("w", List.of(queues), 4))
                      .build())
              .jobs(this::handle));
    }
  }

  private EnqueuedWorkflow enqueue(Workflow w) throws SQLException {
    try (Connection c = db.connect()) {
      List<NewJob> nodes = new ArrayList<>();
      for (Workflow.Node n : w.nodes()) {
        nodes.add(new NewJob(n.queue(), (String) n.payload(), n.options()));
      }
      return jobs.enqueueWorkflow(c, w, nodes);
    }
  }

  private String state(long id) {
    return db.queryText("SELECT state::text FROM pgbus.job_all WHERE id = ?", id);
  }

  private String edge(long from, long to) {
    return db.queryText(
        "SELECT state FROM pgbus.job_dependency WHERE depends_on = ? AND job_id = ?", from, to);
  }

  private void awaitState(long id, String state) {
    Await.until(
        "job " + id + " to be " + state, Duration.ofSeconds(30), () -> state.equals(state(id)));
  }

  @Test
  void aFailureBranchRunsWhenItsParentDiesAndIsNotTakenWhenItCompletes() throws Exception {
    EnqueuedWorkflow dies =
        enqueue(
            Workflow.named("dies")
                .node(
                    "charge",
                    "wf_fail",
                    "{}",
                    io.pgbus.EnqueueOptions.defaults().withMaxAttempts(1))
                .node("ship", "wf_fail", "{}")
                .after("charge")
                .node("refund", "wf_fail", "{}")
                .onFailure("charge"));
    failing.add(dies.jobId("charge"));
    EnqueuedWorkflow completes =
        enqueue(
            Workflow.named("completes")
                .node("charge", "wf_fail", "{}")
                .node("ship", "wf_fail", "{}")
                .after("charge")
                .node("refund", "wf_fail", "{}")
                .onFailure("charge"));
    startEngines(1, "wf_fail");

    awaitState(dies.jobId("refund"), "completed");
    assertThat(state(dies.jobId("charge"))).isEqualTo("dead");
    assertThat(state(dies.jobId("ship"))).isEqualTo("cancelled");
    assertThat(edge(dies.jobId("charge"), dies.jobId("refund"))).isEqualTo("completed");
    assertThat(edge(dies.jobId("charge"), dies.jobId("ship"))).isEqualTo("failed");

    awaitState(completes.jobId("ship"), "completed");
    awaitState(completes.jobId("refund"), "cancelled");
    assertThat(ran).doesNotContain(completes.jobId("refund"), dies.jobId("ship"));
    assertThat(edge(completes.jobId("charge"), completes.jobId("refund"))).isEqualTo("not_taken");
    assertThat(
            db.queryText(
                "SELECT errors -> 0 ->> 'error' FROM pgbus.job_all WHERE id = ?",
                completes.jobId("refund")))
        .startsWith("branch not taken: job " + completes.jobId("charge") + " (failure)");
    WorkflowGraph.Graph g = new WorkflowGraph(db.dataSource()).graph(dies.workflowId());
    assertThat(g.state()).isEqualTo("failed");
    assertThat(g.counts()).isEqualTo(new WorkflowGraph.Counts(0, 0, 1, 1, 1));
    assertThat(g.edges()).hasSize(2);
  }

  @Test
  void aResultBranchRunsOnlyWhenItsPredicateHoldsOnTheParentsResult() throws Exception {
    List<EnqueuedWorkflow> flows = new ArrayList<>();
    for (boolean approved : List.of(true, false)) {
      flows.add(
          enqueue(
              Workflow.named("approval-" + approved)
                  .node("check", "wf_result", "{\"result\":{\"approved\":" + approved + "}}")
                  .node("pay", "wf_result", "{}")
                  .onResult("check", "$.approved == true")
                  .node("reject", "wf_result", "{}")
                  .onResult("check", "$.approved == false")));
    }
    startEngines(1, "wf_result");

    EnqueuedWorkflow yes = flows.get(0);
    EnqueuedWorkflow no = flows.get(1);
    awaitState(yes.jobId("pay"), "completed");
    awaitState(yes.jobId("reject"), "cancelled");
    awaitState(no.jobId("reject"), "completed");
    awaitState(no.jobId("pay"), "cancelled");
    assertThat(ran).doesNotContain(yes.jobId("reject"), no.jobId("pay"));
    assertThat(
            db.queryText(
                "SELECT errors -> 0 ->> 'error' FROM pgbus.job_all WHERE id = ?", no.jobId("pay")))
        .contains("(result ($.\"approved\" == true))");
    WorkflowGraph.Graph g = new WorkflowGraph(db.dataSource()).graph(yes.workflowId());
    assertThat(g.state()).isEqualTo("completed");
    assertThat(g.edges())
        .extracting(WorkflowGraph.Link::kind, WorkflowGraph.Link::state)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple("result", "completed"),
            org.assertj.core.groups.Tuple.tuple("result", "not_taken"));
  }

  @Test
  void aDiamondNodeWaitsForBothParentsAndRunsOnce() throws Exception {
    EnqueuedWorkflow w =
        enqueue(
            Workflow.named("diamond")
                .node("a", "wf_diamond", "{}")
                .node("b", "wf_diamond", "{}")
                .after("a")
                .node("c", "wf_diamond", "{}")
                .after("a")
                .node("d", "wf_diamond", "{}")
                .after("b")
                .after("c"));
    startEngines(2, "wf_diamond");
    awaitState(w.jobId("d"), "completed");
    assertThat(ran.indexOf(w.jobId("d")))
        .isGreaterThan(ran.indexOf(w.jobId("b")))
        .isGreaterThan(ran.indexOf(w.jobId("c")));
    assertThat(runs.get(w.jobId("d")).get()).isEqualTo(1);
  }

  @Test
  void aDiamondNodeWithOneBranchNotTakenIsCancelledAndNeverRuns() throws Exception {
    EnqueuedWorkflow w =
        enqueue(
            Workflow.named("half")
                .node("a", "wf_half", "{}")
                .node("b", "wf_half", "{}")
                .after("a")
                .node("c", "wf_half", "{}")
                .onFailure("a")
                .node("d", "wf_half", "{}")
                .after("b")
                .after("c")
                .node("e", "wf_half", "{}")
                .after("d"));
    startEngines(1, "wf_half");
    awaitState(w.jobId("e"), "cancelled");
    awaitState(w.jobId("b"), "completed");
    assertThat(state(w.jobId("d"))).isEqualTo("cancelled");
    assertThat(ran).containsExactly(w.jobId("a"), w.jobId("b"));
  }

  @Test
  void aCancelOfTheWholeWorkflowStopsItsRunningMemberAndCancelsTheRest() throws Exception {
    EnqueuedWorkflow w =
        enqueue(
            Workflow.named("cancel-me")
                .node("slow", "wf_cancel", "{\"stall\":true}")
                .node("next", "wf_cancel", "{}")
                .after("slow")
                .node("compensate", "wf_cancel", "{}")
                .onFailure("slow"));
    startEngines(1, "wf_cancel");
    awaitState(w.jobId("slow"), "running");

    OptionalInt changed;
    try (Connection c = db.connect()) {
      changed = jobs.cancelWorkflow(c, w.workflowId(), "alice");
    }
    assertThat(changed).hasValue(3);
    awaitState(w.jobId("slow"), "cancelled");
    assertThat(state(w.jobId("next"))).isEqualTo("cancelled");
    assertThat(state(w.jobId("compensate")))
        .as("no failure branch for a cancel")
        .isEqualTo("cancelled");
    assertThat(ran).containsExactly(w.jobId("slow"));
    assertThat(new WorkflowGraph(db.dataSource()).graph(w.workflowId()).state())
        .isEqualTo("cancelled");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'workflow_cancel' AND actor = 'alice'"
                    + " AND (detail ->> 'workflow')::bigint = ?",
                w.workflowId()))
        .isEqualTo(1);
    try (Connection c = db.connect()) {
      assertThat(jobs.cancelWorkflow(c, 999_999, null)).isEmpty();
    }
  }

  @Test
  void aRetryAfterADeadNodeRevivesItsCancelledDescendantsAndTheWorkflowCompletes()
      throws Exception {
    EnqueuedWorkflow w =
        enqueue(
            Workflow.named("retry-me")
                .node("a", "wf_retry", "{}", io.pgbus.EnqueueOptions.defaults().withMaxAttempts(1))
                .node("b", "wf_retry", "{}")
                .after("a")
                .node("c", "wf_retry", "{}")
                .after("b")
                .node("undo", "wf_retry", "{}")
                .onFailure("a")
                .node("skipped", "wf_retry", "{}")
                .onFailure("undo"));
    failing.add(w.jobId("a"));
    startEngines(1, "wf_retry");
    awaitState(w.jobId("c"), "cancelled");
    awaitState(w.jobId("undo"), "completed");
    awaitState(w.jobId("skipped"), "cancelled");
    assertThat(new WorkflowGraph(db.dataSource()).graph(w.workflowId()).state())
        .isEqualTo("failed");

    failing.remove(w.jobId("a"));
    try (Connection c = db.connect()) {
      assertThat(jobs.retryWorkflow(c, w.workflowId(), "bob")).hasValue(3);
    }
    awaitState(w.jobId("c"), "completed");
    assertThat(state(w.jobId("b"))).isEqualTo("completed");
    assertThat(state(w.jobId("skipped"))).as("a branch not taken stays").isEqualTo("cancelled");
    assertThat(runs.get(w.jobId("undo")).get()).as("the failure branch ran once").isEqualTo(1);
    assertThat(new WorkflowGraph(db.dataSource()).graph(w.workflowId()).state())
        .isEqualTo("completed");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'workflow_retry' AND actor = 'bob'"))
        .isEqualTo(1);
  }

  @Test
  void jobsAMembersHandlerEnqueuesJoinItsWorkflow() throws Exception {
    EnqueuedWorkflow w =
        enqueue(Workflow.named("fan-out").node("root", "wf_fan", "{\"fanout\":true}"));
    long plain;
    try (Connection c = db.connect()) {
      plain = jobs.enqueue(c, NewJob.of("wf_fan", "{}"));
    }
    startEngines(1, "wf_fan");
    Await.until(
        "the root, its child and the plain job to run",
        Duration.ofSeconds(30),
        () -> ran.size() == 3);
    long child = db.queryLong("SELECT id FROM pgbus.job_all WHERE payload ->> 'child' = 'true'");
    Await.until(
        "the child to complete", Duration.ofSeconds(30), () -> "completed".equals(state(child)));
    assertThat(seenWorkflow.get(w.jobId("root"))).isEqualTo(w.workflowId());
    assertThat(seenWorkflow.get(child)).isEqualTo(w.workflowId());
    assertThat(seenWorkflow).doesNotContainKey(plain);
    WorkflowGraph.Graph g = new WorkflowGraph(db.dataSource()).graph(w.workflowId());
    assertThat(g.nodes())
        .extracting(WorkflowGraph.Member::job, WorkflowGraph.Member::node)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(w.jobId("root"), "root"),
            org.assertj.core.groups.Tuple.tuple(child, null));
  }

  @Test
  void threeEnginesRunEveryNodeOfALayeredWorkflowOnce() throws Exception {
    Workflow w = Workflow.named("layers");
    int layers = 10;
    int width = 20;
    for (int l = 0; l < layers; l++) {
      for (int k = 0; k < width; k++) {
        w.node("n" + l + "_" + k, "wf_many", "{}");
        if (l > 0) {
          w.after("n" + (l - 1) + "_" + k).after("n" + (l - 1) + "_" + ((k + 1) % width));
        }
      }
    }
    EnqueuedWorkflow e = enqueue(w);
    startEngines(3, "wf_many");
    Await.until(
        "every node to complete",
        Duration.ofSeconds(60),
        () ->
            db.queryLong(
                    "SELECT count(*) FROM pgbus.job_all WHERE state = 'completed' AND queue = 'wf_many'")
                == (long) layers * width);
    assertThat(e.jobIds()).hasSize(layers * width);
    assertThat(runs).hasSize(layers * width);
    assertThat(runs.values()).allMatch(n -> n.get() == 1);
  }

  // --- bad input, on the Java path and the SQL path alike ---

  @Test
  void aCycleAnUnknownNodeAndTooManyNodesAreRefusedNamingThemInJava() {
    Workflow cycle =
        Workflow.named("loop")
            .node("a", "wf_bad", "{}")
            .after("c")
            .node("b", "wf_bad", "{}")
            .after("a")
            .node("c", "wf_bad", "{}")
            .after("b");
    assertThatThrownBy(cycle::validate)
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("cycle")
        .hasMessageContaining("to node 'a'");
    Workflow unknown = Workflow.named("lost").node("a", "wf_bad", "{}").after("nobody");
    assertThatThrownBy(unknown::validate)
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("unknown node 'nobody'");
    Workflow big = Workflow.named("big");
    for (int i = 0; i < Workflow.MAX_NODES; i++) {
      big.node("n" + i, "wf_bad", "{}");
    }
    assertThatThrownBy(() -> big.node("one-more", "wf_bad", "{}"))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("more than 1000 nodes");
    assertThatThrownBy(
            () ->
                Workflow.named("p")
                    .node("a", "wf_bad", "{}")
                    .node("b", "wf_bad", "{}")
                    .onResult("a", " "))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("predicate ' '");
  }

  @Test
  void aBadPredicateIsRefusedNamingItAndNothingIsWritten() {
    for (String bad : List.of("$.approved", "$$ nonsense ==")) {
      Workflow w =
          Workflow.named("pred")
              .node("a", "wf_bad", "{}")
              .node("b", "wf_bad", "{}")
              .onResult("a", bad);
      assertThatThrownBy(() -> enqueue(w))
          .isInstanceOf(PgbusException.class)
          .hasMessageContaining("'" + bad + "'")
          .hasMessageContaining("node 'a'".replace("'", ""));
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.workflow")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job")).isZero();
  }

  @Test
  void theSqlPathRefusesACycleAnUnknownNodeABadPredicateAndTooManyNodesNamingThem() {
    assertThat(
            sqlError(
                "[{\"node\":\"a\",\"queue\":\"q\",\"payload\":{},\"after\":[{\"node\":\"b\"}]},"
                    + "{\"node\":\"b\",\"queue\":\"q\",\"payload\":{},\"after\":[{\"node\":\"a\"}]}]"))
        .contains("cycle")
        .contains("node 'b' to node 'a'");
    assertThat(
            sqlError(
                "[{\"node\":\"a\",\"queue\":\"q\",\"payload\":{},\"after\":[{\"node\":\"x\"}]}]"))
        .contains("unknown node 'x'");
    assertThat(
            sqlError(
                "[{\"node\":\"a\",\"queue\":\"q\",\"payload\":{}},{\"node\":\"b\",\"queue\":\"q\","
                    + "\"payload\":{},\"after\":[{\"node\":\"a\",\"kind\":\"result\","
                    + "\"predicate\":\"$.approved\"}]}]"))
        .contains("'$.approved'")
        .contains("not a predicate");
    StringBuilder many = new StringBuilder("[");
    for (int i = 0; i <= Workflow.MAX_NODES; i++) {
      many.append(i == 0 ? "" : ",")
          .append("{\"node\":\"n")
          .append(i)
          .append("\",\"queue\":\"q\",\"payload\":{}}");
    }
    assertThat(sqlError(many.append("]").toString())).contains("1001 nodes");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.workflow")).isZero();
    // And a good one works, with the ids in the nodes' order.
    List<Long> ids =
        db.queryLongs(
            "SELECT unnest(job_ids) FROM pgbus.enqueue_workflow('sql', '[{\"node\":\"a\",\"queue\":\"q\","
                + "\"payload\":{}},{\"node\":\"b\",\"queue\":\"q\",\"payload\":{},\"after\":"
                + "[{\"node\":\"a\",\"kind\":\"failure\"}]}]')");
    assertThat(ids).hasSize(2);
    assertThat(state(ids.get(1))).isEqualTo("scheduled");
    assertThat(edge(ids.get(0), ids.get(1))).isEqualTo("waiting");
  }

  private String sqlError(String nodes) {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT * FROM pgbus.enqueue_workflow('bad', ?::jsonb)")) {
      ps.setString(1, nodes);
      try (ResultSet rs = ps.executeQuery()) {
        throw new AssertionError("accepted: " + nodes);
      }
    } catch (SQLException e) {
      return e.getMessage();
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.DependencyFailure;
import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedBatch;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention deletes a batch once its members and its callback are done with, and a dependency edge
 * once its dependent is gone, in bounded rounds like the job pruning; nothing a job still needs.
 */
class LinkRetentionTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach("pgbus.job", "pgbus.batch", "pgbus.job_dependency", "pgbus.workflow");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Jobs jobs = new Jobs("link-retention-test", 1 << 20, JobTracing.NONE);
  private final JobStore store = new JobStore();
  private final LinkStore links = new LinkStore();

  @Test
  void aBatchGoesOnlyOnceItsMembersArePrunedAndItsCallbackIsDoneAndAtMostABatchPerRound()
      throws Exception {
    try (Connection c = db.connect()) {
      EnqueuedBatch first = finishedBatch(c, "lr_one");
      finishedBatch(c, "lr_two");
      finishedBatch(c, "lr_three");
      assertThat(links.batchPrune(c, Duration.ZERO, 10)).as("members still kept").isZero();

      pruneCompleted(c);
      assertThat(links.batchPrune(c, Duration.ZERO, 10)).as("callbacks still waiting").isZero();

      // Each callback: one completes, one dies, one is cancelled.
      long dead = runCallback(c, "lr_one_done", false);
      runCallback(c, "lr_two_done", true);
      assertThat(jobs.cancel(c, callbackOf("lr_three_done"))).isTrue();
      assertThat(
              db.queryLong("SELECT callback_job_id FROM pgbus.batch WHERE id = ?", first.batchId()))
          .isEqualTo(dead);

      assertThat(links.batchPrune(c, Duration.ofDays(1), 10))
          .as("batches younger than the shortest retention are not probed")
          .isZero();
      assertThat(links.batchPrune(c, Duration.ZERO, 1))
          .as("one batch per round of size 1")
          .isEqualTo(1);
      assertThat(links.batchPrune(c, Duration.ZERO, 1)).isEqualTo(1);
      assertThat(links.batchPrune(c, Duration.ZERO, 1))
          .as("a dead callback keeps its batch (replay)")
          .isZero();
      assertThat(db.queryLongs("SELECT id FROM pgbus.batch")).containsExactly(first.batchId());

      assertThat(store.jobPrune(c, "dead", Duration.ZERO, 100)).isEqualTo(1);
      assertThat(links.batchPrune(c, Duration.ZERO, 10)).isEqualTo(1);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.batch")).isZero();
  }

  @Test
  void aWorkflowGoesOnceNoMemberIsLeftAndOnlyPastTheShortestRetention() throws Exception {
    long member =
        db.queryLong("INSERT INTO pgbus.job (queue, payload) VALUES ('lr_wf', '{}') RETURNING id");
    long oldEmpty = workflow("2 days", member + 1000, member + 1001);
    long oldLive = workflow("2 days", member, member + 1002);
    long youngEmpty = workflow("1 minute", member + 1003);
    try (Connection c = db.connect()) {
      assertThat(links.workflowPrune(c, Duration.ofDays(1), 10))
          .as("only the old workflow whose members are all gone")
          .isEqualTo(1);
      assertThat(db.queryLongs("SELECT id FROM pgbus.workflow ORDER BY id"))
          .containsExactly(oldLive, youngEmpty);
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.workflow_job WHERE workflow_id = ?", oldEmpty))
          .as("its member rows go with it")
          .isZero();

      assertThat(links.workflowPrune(c, Duration.ZERO, 10))
          .as("retention 0 (delete at completion): any empty workflow")
          .isEqualTo(1);
      assertThat(db.queryLongs("SELECT id FROM pgbus.workflow")).containsExactly(oldLive);

      db.update("DELETE FROM pgbus.job WHERE id = ?", member);
      assertThat(links.workflowPrune(c, Duration.ofDays(1), 10)).isEqualTo(1);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.workflow")).isZero();
  }

  /** A workflow created {@code age} ago whose members are the given job ids. */
  private static long workflow(String age, long... memberIds) {
    long id =
        db.queryLong(
            "INSERT INTO pgbus.workflow (name, created_at) VALUES ('lr', now() - ?::interval)"
                + " RETURNING id",
            age);
    for (long m : memberIds) {
      db.update(
          "INSERT INTO pgbus.workflow_job (workflow_id, job_id, node, queue)"
              + " VALUES (?, ?, 'n' || ?::text, 'lr_wf')",
          id,
          m,
          m);
    }
    return id;
  }

  @Test
  void anEdgeGoesWhenItsDependentIsGoneAndStaysWhileItsDependentWaits() throws Exception {
    long a;
    long dies;
    long waits;
    try (Connection c = db.connect()) {
      a = jobs.enqueue(c, NewJob.of("lr_dep", "{}"));
      long b = jobs.enqueue(c, NewJob.of("lr_dep_never", "{}"));
      dies =
          jobs.enqueue(
              c,
              new NewJob(
                  "lr_dep", "{}", EnqueueOptions.defaults().withMaxAttempts(1).afterJobs(a)));
      waits =
          jobs.enqueue(
              c,
              new NewJob(
                  "lr_dep_waits",
                  "{}",
                  EnqueueOptions.defaults().afterJobs(a).afterJobs(DependencyFailure.HOLD, b)));
      ClaimedJob first = store.jobClaim(c, List.of("lr_dep"), 1, "w", Duration.ofMinutes(1)).get(0);
      assertThat(first.id()).isEqualTo(a);
      assertThat(store.jobCompleteWithResult(c, first, "{\"a\":1}")).isTrue();
      ClaimedJob second =
          store.jobClaim(c, List.of("lr_dep"), 1, "w", Duration.ofMinutes(1)).get(0);
      assertThat(second.id()).isEqualTo(dies);
      assertThat(store.jobFail(c, second, "boom", Duration.ZERO).dead()).isTrue();
      assertThat(edgeLap(c)).as("every dependent still exists").isZero();

      // The dependency a goes: the waiting dependent keeps its edge (and a's result) all the same.
      pruneCompleted(c);
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ?", a)).isZero();
      assertThat(edgeLap(c)).isZero();

      // The dead dependent goes: its kept edge is now an orphan.
      assertThat(store.jobPrune(c, "dead", Duration.ZERO, 100)).isEqualTo(1);
      assertThat(edgeLap(c)).isEqualTo(1);
      assertThat(edgeLap(c)).isZero();
    }
    assertThat(db.queryLongs("SELECT job_id FROM pgbus.job_dependency"))
        .containsExactly(waits, waits);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_dependency WHERE job_id = ? AND depends_on = ?"
                    + " AND result IS NOT NULL",
                waits,
                a))
        .isEqualTo(1);
  }

  @Test
  void eachRoundReadsOneWindowOfEdgesAfterItsCursorAndTheWalkStartsOverAfterTheLast()
      throws Exception {
    try (Connection c = db.connect()) {
      long never = jobs.enqueue(c, NewJob.of("lr_dep_never", "{}"));
      List<Long> waiting = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        waiting.add(
            jobs.enqueue(
                c, new NewJob("lr_dep_waits", "{}", EnqueueOptions.defaults().afterJobs(never))));
      }
      // Ten orphans, as an operator's delete of dead dependents leaves them; ids before any job's.
      orphans(-100, -91);

      LinkStore.EdgeRound r = links.dependencyPrune(c, LinkStore.EDGES_FROM_START, 4, 100);
      assertThat(r).as("the first window").isEqualTo(new LinkStore.EdgeRound(4, -97));
      assertThat(edgeIds()).startsWith(-96L).hasSize(9);

      r = links.dependencyPrune(c, r.next(), 4, 100);
      assertThat(r).as("the next window").isEqualTo(new LinkStore.EdgeRound(4, -93));

      r = links.dependencyPrune(c, r.next(), 4, 100);
      assertThat(r)
          .as("two orphans and two waiting dependents' edges, which stay")
          .isEqualTo(new LinkStore.EdgeRound(2, waiting.get(1)));

      r = links.dependencyPrune(c, r.next(), 4, 100);
      assertThat(r)
          .as("past the last edge the walk starts over")
          .isEqualTo(new LinkStore.EdgeRound(0, LinkStore.EDGES_FROM_START));
      assertThat(edgeIds()).containsExactlyElementsOf(waiting);

      // A round that deleted its batch reads the same window again: orphans may be left in it.
      orphans(-50, -48);
      r = links.dependencyPrune(c, LinkStore.EDGES_FROM_START, 10, 2);
      assertThat(r).isEqualTo(new LinkStore.EdgeRound(2, LinkStore.EDGES_FROM_START));
      assertThat(edgeIds()).hasSize(4);
      r = links.dependencyPrune(c, r.next(), 2, 2);
      assertThat(r).as("the one left").isEqualTo(new LinkStore.EdgeRound(1, waiting.get(0)));
      assertThat(edgeIds()).containsExactlyElementsOf(waiting);
    }
  }

  /** Edges whose dependents (ids from..to, no job's) do not exist. */
  private static void orphans(long from, long to) {
    db.update(
        "INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure)"
            + " SELECT 1, g, 'hold' FROM generate_series(?::bigint, ?::bigint) g",
        from,
        to);
  }

  private static List<Long> edgeIds() {
    return db.queryLongs("SELECT job_id FROM pgbus.job_dependency ORDER BY job_id");
  }

  /** A whole walk of the edges, a window of two at a time: the orphans it deleted. */
  private int edgeLap(Connection c) throws SQLException {
    int deleted = 0;
    long after = LinkStore.EDGES_FROM_START;
    do {
      LinkStore.EdgeRound r = links.dependencyPrune(c, after, 2, 10);
      deleted += r.deleted();
      after = r.next();
    } while (after != LinkStore.EDGES_FROM_START);
    return deleted;
  }

  @Test
  void theLeadersRetentionRoundsPruneFinishedBatchesAndOrphanedEdges() throws Exception {
    try (Connection c = db.connect()) {
      for (int i = 0; i < 3; i++) {
        jobs.enqueueBatch(
            c,
            List.of(NewJob.of("lr_run", "{}"), NewJob.of("lr_run", "{}")),
            NewJob.of("lr_run", "{\"callback\":true}"));
      }
      // An orphaned edge as an operator's delete of a dead dependent leaves it.
      db.update(
          "INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure) VALUES (1, -5, 'hold')");
    }
    engines.start(
        engines
            .config()
            .completedRetention(Duration.ZERO)
            .pruneInterval(Duration.ofMillis(100))
            .pruneBatch(1)
            .capsule(new CapsuleConfig("lr", List.of("lr_run"), 2))
            .build(),
        (job, tx) -> Outcome.complete());
    Await.until(
        "the batches and the edge to be pruned",
        Duration.ofSeconds(60),
        () ->
            db.queryLong("SELECT count(*) FROM pgbus.batch") == 0
                && db.queryLong("SELECT count(*) FROM pgbus.job_dependency") == 0);
    assertThat(db.jobCount()).isZero();
  }

  private EnqueuedBatch finishedBatch(Connection c, String queue) throws Exception {
    EnqueuedBatch batch =
        jobs.enqueueBatch(
            c,
            List.of(NewJob.of(queue, "{}"), NewJob.of(queue, "{}")),
            new NewJob(queue + "_done", "{}", EnqueueOptions.defaults().withMaxAttempts(1)));
    for (ClaimedJob j : store.jobClaim(c, List.of(queue), 2, "w", Duration.ofMinutes(1))) {
      assertThat(store.jobComplete(c, j)).isTrue();
    }
    assertThat(db.queryLong("SELECT pending FROM pgbus.batch WHERE id = ?", batch.batchId()))
        .isZero();
    return batch;
  }

  private void pruneCompleted(Connection c) throws Exception {
    Await.until(
        "the completed jobs to be pruned",
        Duration.ofSeconds(10),
        () -> {
          store.jobPrune(c, "completed", Duration.ZERO, 1000);
          return db.queryLong("SELECT count(*) FROM pgbus.job WHERE state = 'completed'") == 0;
        });
  }

  private long callbackOf(String queue) {
    return db.queryLong("SELECT id FROM pgbus.job WHERE queue = ?", queue);
  }

  private long runCallback(Connection c, String queue, boolean complete) throws Exception {
    ClaimedJob cb = store.jobClaim(c, List.of(queue), 1, "w", Duration.ofMinutes(1)).get(0);
    if (complete) {
      assertThat(store.jobComplete(c, cb)).isTrue();
    } else {
      assertThat(store.jobFail(c, cb, "boom", Duration.ZERO).dead()).isTrue();
    }
    return cb.id();
  }
}

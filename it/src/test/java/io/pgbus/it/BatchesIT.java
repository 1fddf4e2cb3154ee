package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.BatchSummary;
import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedBatch;
import io.pgbus.JobBatch;
import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Batches and dependencies through the Java API, in the caller's JTA transaction: a rollback leaves
 * no batch, no member, no edge and no mark on the job depended on; a commit runs the members, the
 * callback once with its counts, and the dependent after its dependency, with its result. A job a
 * handler enqueues inherits the handled job's correlation id.
 */
@ExtendWith(ArquillianExtension.class)
class BatchesIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "batches",
            "pgbus.capsules=comp",
            "pgbus.capsule.comp.queues=it_group,it_group_done,it_after,it_parent")
        .addClass(CompositionHandler.class);
  }

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;

  @Resource(lookup = "java:comp/UserTransaction")
  UserTransaction tx;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aRolledBackBatchAndDependentLeaveNothingBehind() throws Exception {
    awaitReady(); // the runtime migrates the schema at start; this may be the first test
    String text = "rb-" + UUID.randomUUID();
    long batches = Sql.count(ds, "SELECT count(*) FROM pgbus.batch");
    long edges = Sql.count(ds, "SELECT count(*) FROM pgbus.job_dependency");
    long dependency = jobs.enqueue("it_after", new Marker(text, false));

    tx.begin();
    jobs.enqueueBatch(
        JobBatch.withCallback("it_group_done", new Marker(text + "-done", false))
            .add("it_group", new Marker(text + "-1", false))
            .add("it_group", new Marker(text + "-2", false)));
    jobs.enqueue(
        "it_after",
        new Marker(text + "-after", false),
        EnqueueOptions.defaults().afterJobs(dependency));
    tx.rollback();

    assertEquals(batches, Sql.count(ds, "SELECT count(*) FROM pgbus.batch"));
    assertEquals(edges, Sql.count(ds, "SELECT count(*) FROM pgbus.job_dependency"));
    assertEquals(
        0,
        Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE payload->>'text' LIKE ?", text + "-%"));
    assertEquals(
        0, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND linked", dependency));
  }

  @Test
  void aCommittedBatchCallsBackOnceAndADependentRunsAfterItsDependencyWithItsResult()
      throws Exception {
    String text = "ok-" + UUID.randomUUID();
    awaitReady();
    tx.begin();
    EnqueuedBatch batch =
        jobs.enqueueBatch(
            JobBatch.withCallback("it_group_done", new Marker(text + "-done", false))
                .add("it_group", new Marker(text + "-1", false))
                .add("it_group", new Marker(text + "-2", false))
                .add("it_group", new Marker(text + "-3", false)));
    long first = batch.jobIds().get(0);
    long after =
        jobs.enqueue(
            "it_after",
            new Marker(text + "-after", false),
            EnqueueOptions.defaults().afterJobs(first));
    tx.commit();

    Await.until(
        "the batch's callback to run",
        Duration.ofSeconds(60),
        () ->
            callbackId(batch.batchId()) != null
                && CompositionHandler.CALLBACKS.containsKey(callbackId(batch.batchId())));
    assertEquals(
        new BatchSummary(batch.batchId(), 3, 3, 0, 0),
        CompositionHandler.CALLBACKS.get(callbackId(batch.batchId())));
    assertEquals(
        1,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.job WHERE queue = 'it_group_done'"
                + " AND payload->>'text' = ?",
            text + "-done"));
    Await.until(
        "the dependent to run",
        Duration.ofSeconds(60),
        () -> CompositionHandler.DEPENDENTS.containsKey(after));
    assertEquals(
        Map.of(first, "{\"text\": \"" + text + "-1\"}"), CompositionHandler.DEPENDENTS.get(after));
  }

  @Test
  void aJobAHandlerEnqueuesInheritsTheHandledJobsCorrelationId() throws Exception {
    String text = "parent-" + UUID.randomUUID();
    awaitReady();
    jobs.enqueue(
        "it_parent",
        new Marker(text, false),
        EnqueueOptions.defaults().withCorrelationId("corr-" + text));

    Await.until(
        "the parent's child to be enqueued",
        Duration.ofSeconds(60),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE queue = 'it_group'"
                        + " AND payload->>'text' = ?",
                    text + "-child")
                == 1);
    assertEquals(
        "corr-" + text,
        Sql.value(
            ds,
            "SELECT correlation_id FROM pgbus.job WHERE queue = 'it_group' AND payload->>'text' = ?",
            text + "-child"));
  }

  private Long callbackId(long batchId) throws Exception {
    Object id = Sql.value(ds, "SELECT callback_job_id FROM pgbus.batch WHERE id = ?", batchId);
    return id == null ? null : ((Number) id).longValue();
  }

  private void awaitReady() throws Exception {
    Await.until("pgbus to be ready", Duration.ofSeconds(60), () -> runtime.status().ready());
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.BatchSummary;
import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedBatch;
import io.pgbus.InvalidJobException;
import io.pgbus.JobBatch;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.ChildJvm;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A batch's callback is enqueued exactly once, by the transaction that finishes its last member,
 * with the counts per outcome, whichever path finished each member and on whichever engine.
 */
class BatchTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Jobs jobs = new Jobs("batch-test", 1 << 20, JobTracing.NONE);
  private final JobStore store = new JobStore();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.batch");
    db.update("DELETE FROM pgbus.job_dependency");
  }

  @Test
  void tenThousandMembersOverThreeEnginesOneStoppedMidwayFireOneCallbackWithTheRightCounts()
      throws Exception {
    int size = JobBatch.MAX_SIZE;
    var members = new ArrayList<NewJob>(size);
    for (int i = 0; i < size; i++) {
      members.add(
          new NewJob(
              "bt_members", "{\"n\":" + i + "}", EnqueueOptions.defaults().withMaxAttempts(2)));
    }
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch = jobs.enqueueBatch(c, members, NewJob.of("bt_done", "{\"import\":7}"));
    }
    assertThat(batch.jobIds()).hasSize(size);

    var callbacks = new CopyOnWriteArrayList<BatchSummary>();
    var handled = new AtomicInteger();
    var hang = new CountDownLatch(1);
    JobFunction work =
        (job, tx) -> {
          if (job.queue().equals("bt_done")) {
            callbacks.add(job.batch().orElseThrow());
            return Outcome.complete();
          }
          int n = Integer.parseInt(job.payload().replaceAll("\\D", ""));
          if (n % 1000 == 7) {
            throw new IllegalStateException("member " + n + " always fails");
          }
          handled.incrementAndGet();
          return Outcome.completeJson("{\"n\":" + n + "}");
        };
    JobFunction doomed =
        (job, tx) -> {
          if (handled.get() > 1500) {
            // The "killed" engine: its handlers never return; its stop hands their jobs back.
            while (true) {
              try {
                hang.await();
                throw new IllegalStateException("released after the engine stopped");
              } catch (InterruptedException ignored) {
                // the watchdog; a crashed JVM would not have listened either
              }
            }
          }
          return work.run(job, tx);
        };
    var fast = new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), 0);
    // One engine deletes completed jobs (retention 0) one per transaction, one completes 10 per
    // transaction, one is stopped in the middle while its handlers hang. A batch's finishing
    // members queue on its counter row, one transaction at a time: 10 jobs per transaction is the
    // throughput setting for big batches (docs/batches.md).
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .retry(fast)
                    .completedRetention(Duration.ZERO)
                    .capsule(new CapsuleConfig("a", List.of("bt_members", "bt_done"), 2))
                    .build())
            .jobs(work));
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .retry(fast)
                    .capsule(new CapsuleConfig("b", List.of("bt_members", "bt_done"), 4, 10))
                    .build())
            .jobs(work));
    Engine third =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .retry(fast)
                        .drainTimeout(Duration.ofMillis(300))
                        .capsule(new CapsuleConfig("c", List.of("bt_members", "bt_done"), 4, 10))
                        .build())
                .jobs(doomed));

    Await.until("2,000 members done", Duration.ofMinutes(10), () -> handled.get() > 2000);
    third.stop();
    hang.countDown();

    Await.until("the callback", Duration.ofMinutes(15), () -> callbacks.size() >= 1);
    assertThat(callbacks.get(0)).isEqualTo(new BatchSummary(batch.batchId(), size, 9990, 10, 0));
    assertThat(db.queryLong("SELECT pending FROM pgbus.batch WHERE id = ?", batch.batchId()))
        .isZero();
    // Every member has finished, so nothing can enqueue another callback now; the one enqueued
    // ran (and, on the retention-0 engine, was deleted) and none waits.
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE state <> 'completed'"))
        .as("members left unfinished and callbacks still waiting")
        .isEqualTo(10); // the 10 dead members
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.batch WHERE callback_job_id IS NOT NULL"))
        .isEqualTo(1);
    assertThat(callbacks).as("callback runs").hasSize(1);
  }

  @Test
  void tenThousandMembersOverThreeJvmsOneKilledMidwayFireOneCallbackWithTheRightCounts()
      throws Exception {
    int size = JobBatch.MAX_SIZE;
    var members = new ArrayList<NewJob>(size);
    for (int i = 0; i < size; i++) {
      members.add(
          new NewJob(
              "bk_members", "{\"n\":" + i + "}", EnqueueOptions.defaults().withMaxAttempts(2)));
    }
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch = jobs.enqueueBatch(c, members, NewJob.of("bk_done", "{}"));
    }
    Duration lease = Duration.ofSeconds(3);
    Duration leaderTtl = Duration.ofSeconds(2);
    try (ChildJvm child =
        ChildJvm.start(
            BatchMemberWorker.class,
            db.jdbcUrl(),
            "bk_members",
            "doomed-batch-jvm",
            Long.toString(lease.toMillis()),
            Long.toString(leaderTtl.toMillis()),
            "1500")) {
      // The child alone runs the first 1,500 members (some of them fail), then holds some more in
      // open transactions: the middle of the batch.
      child.await("HOLDING", Duration.ofMinutes(5));
      var callbacks = new CopyOnWriteArrayList<BatchSummary>();
      JobFunction work =
          (job, tx) -> {
            if (job.queue().equals("bk_done")) {
              callbacks.add(job.batch().orElseThrow());
              return Outcome.complete();
            }
            return BatchMemberWorker.member(job.payload());
          };
      for (int jobsPerTransaction : new int[] {1, 10}) {
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .lease(lease)
                        .leaderTtl(leaderTtl)
                        .pollCeiling(Duration.ofSeconds(1))
                        .rescueInterval(Duration.ofMillis(200))
                        .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), 0))
                        .capsule(
                            new CapsuleConfig(
                                "k" + jobsPerTransaction,
                                List.of("bk_members", "bk_done"),
                                4,
                                jobsPerTransaction))
                        .build())
                .jobs(work));
      }
      long held =
          db.queryLong(
              "SELECT count(*) FROM pgbus.job WHERE state = 'running' AND attempted_by = ?",
              "doomed-batch-jvm");
      assertThat(child.kill9()).as("exit code of a SIGKILLed JVM").isEqualTo(137);

      Await.until("the callback", Duration.ofMinutes(15), () -> callbacks.size() >= 1);
      assertThat(callbacks.get(0))
          .isEqualTo(new BatchSummary(batch.batchId(), size, size - 10, 10, 0));
      assertThat(held).as("jobs the killed JVM held when it was killed").isPositive();
    }
    assertThat(db.queryLong("SELECT pending FROM pgbus.batch WHERE id = ?", batch.batchId()))
        .isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'bk_done'"))
        .as("callbacks enqueued")
        .isEqualTo(1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE queue = 'bk_members' AND errors::text LIKE"
                    + " '%doomed-batch-jvm%'"))
        .as("members rescued from the killed JVM")
        .isPositive();
  }

  @Test
  void everyPathToAFinalStateCountsOnceAndTheLastFiresTheCallbackInItsTransaction()
      throws Exception {
    var members = new ArrayList<NewJob>();
    for (int i = 0; i < 6; i++) {
      members.add(
          new NewJob(
              "bt_paths", "{\"n\":" + i + "}", EnqueueOptions.defaults().withMaxAttempts(1)));
    }
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch = jobs.enqueueBatch(c, members, NewJob.of("bt_paths_done", "{}"));
      // cancelled while waiting
      assertThat(jobs.cancel(c, batch.jobIds().get(0))).isTrue();
      List<ClaimedJob> held = store.jobClaim(c, List.of("bt_paths"), 5, "w", Duration.ofMillis(1));
      assertThat(held).hasSize(5);
      c.setAutoCommit(false);
      assertThat(store.jobComplete(c, held.get(0), false)).isTrue();
      assertThat(store.jobComplete(c, held.get(1), true)).as("deleted on completion").isTrue();
      assertThat(store.jobCompleteWithResult(c, held.get(2), "{\"r\":1}")).isTrue();
      assertThat(store.jobFail(c, held.get(3), "boom", Duration.ZERO).dead()).isTrue();
      c.commit();
      assertThat(callbackCount()).isZero();
      // the last one: its lease expired, and the rescue (its last attempt) makes it dead
      Await.until(
          "the lease to expire",
          Duration.ofSeconds(10),
          () ->
              db.queryLong(
                      "SELECT count(*) FROM pgbus.job WHERE state = 'running' AND lease_expires_at < now()")
                  == 1);
      store.jobRescueExpired(c, 10);
      c.rollback();
      assertThat(callbackCount()).as("a rolled-back finish counts nothing").isZero();
      store.jobRescueExpired(c, 10);
      c.commit();
    }
    assertThat(callbackCount()).isEqualTo(1);
    assertThat(summary(batch.batchId())).isEqualTo(new BatchSummary(batch.batchId(), 6, 3, 2, 1));
  }

  @Test
  void aReplayedDeadMemberLeavesItsBatchAndNeverFiresASecondCallback() throws Exception {
    var members = List.of(NewJob.of("bt_replay", "{}"), NewJob.of("bt_replay", "{}"));
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch = jobs.enqueueBatch(c, members, NewJob.of("bt_replay_done", "{}"));
      for (ClaimedJob j : store.jobClaim(c, List.of("bt_replay"), 2, "w", Duration.ofMinutes(1))) {
        db.update("UPDATE pgbus.job SET max_attempts = 1 WHERE id = ?", j.id());
        store.jobFail(c, j, "boom", Duration.ZERO);
      }
      assertThat(callbackCount()).isEqualTo(1);
      long dead = batch.jobIds().get(0);
      assertThat(jobs.replay(c, dead)).isTrue();
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.job WHERE id = ? AND batch_id IS NULL", dead))
          .isEqualTo(1);
      ClaimedJob again =
          store.jobClaim(c, List.of("bt_replay"), 1, "w", Duration.ofMinutes(1)).get(0);
      assertThat(store.jobComplete(c, again)).isTrue();
    }
    assertThat(callbackCount()).isEqualTo(1);
    assertThat(summary(batch.batchId())).isEqualTo(new BatchSummary(batch.batchId(), 2, 0, 2, 0));
  }

  @Test
  void aMemberBuriedByTheClaimCountsDeadAndTheLastOneFiresOneCallback() throws Exception {
    // Both members fit the limit when enqueued; the limit is lowered below them before the claim,
    // which buries them dead (their payload never leaves the database).
    String big = "{\"blob\":\"" + "x".repeat(4000) + "\"}";
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(NewJob.of("bt_buried", big), NewJob.of("bt_buried", big)),
              NewJob.of("bt_buried_done", "{}"));
    }
    try {
      db.update("UPDATE pgbus.setting SET max_payload_bytes = 2000");
      try (Connection c = db.connect()) {
        c.setAutoCommit(false);
        assertThat(store.jobClaim(c, List.of("bt_buried"), 1, "w", Duration.ofMinutes(1)))
            .isEmpty();
        c.rollback();
        assertThat(callbackCount()).as("a rolled-back claim buries and counts nothing").isZero();
        assertThat(db.job(batch.jobIds().get(1)).state()).isEqualTo("available");
        c.setAutoCommit(true);
        // One claim buries both (a buried job's slot goes to the next job of its queue).
        assertThat(store.jobClaim(c, List.of("bt_buried"), 1, "w", Duration.ofMinutes(1)))
            .as("buried, not returned")
            .isEmpty();
        assertThat(store.jobClaim(c, List.of("bt_buried"), 1, "w", Duration.ofMinutes(1)))
            .as("nothing left to bury or claim")
            .isEmpty();
      }
    } finally {
      db.update("UPDATE pgbus.setting SET max_payload_bytes = 1048576");
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE state = 'dead'")).isEqualTo(2);
    assertThat(callbackCount()).isEqualTo(1);
    assertThat(db.jobCount("bt_buried_done", "available")).isEqualTo(1);
    assertThat(summary(batch.batchId())).isEqualTo(new BatchSummary(batch.batchId(), 2, 0, 2, 0));
  }

  @Test
  void anOperatorsBulkCancelCountsEachMemberOnceAndADeleteOfFinishedMembersChangesNothing()
      throws Exception {
    var admin = new JobAdminStore();
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(
                  NewJob.of("bt_admin", "{}"),
                  NewJob.of("bt_admin", "{}"),
                  NewJob.of("bt_admin", "{}")),
              NewJob.of("bt_admin_done", "{}"));
      ClaimedJob first =
          store.jobClaim(c, List.of("bt_admin"), 1, "w", Duration.ofMinutes(1)).get(0);
      assertThat(store.jobComplete(c, first)).isTrue();
      // The other two, by the admin API's bulk cancel; then every finished member is deleted.
      assertThat(
              admin.jobAct(
                  c,
                  JobAdminStore.Action.CANCEL,
                  io.pgbus.admin.JobFilter.all().withQueue("bt_admin"),
                  100,
                  "ops"))
          .isEqualTo(2);
      assertThat(callbackCount()).isEqualTo(1);
      assertThat(
              admin.jobAct(
                  c,
                  JobAdminStore.Action.DELETE,
                  io.pgbus.admin.JobFilter.all().withQueue("bt_admin"),
                  100,
                  "ops"))
          .isEqualTo(3);
      assertThat(
              admin.jobAct(
                  c,
                  JobAdminStore.Action.CANCEL,
                  io.pgbus.admin.JobFilter.all().withQueue("bt_admin"),
                  100,
                  "ops"))
          .isZero();
    }
    assertThat(callbackCount()).isEqualTo(1);
    assertThat(db.jobCount("bt_admin_done", "available")).isEqualTo(1);
    assertThat(summary(batch.batchId())).isEqualTo(new BatchSummary(batch.batchId(), 3, 1, 0, 2));
  }

  @Test
  void anOperatorsBulkReplayOfADeadMemberAfterTheCallbackFiresNoSecondCallback() throws Exception {
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(
                  new NewJob("bt_bulk", "{}", EnqueueOptions.defaults().withMaxAttempts(1)),
                  NewJob.of("bt_bulk", "{}")),
              NewJob.of("bt_bulk_done", "{}"));
      List<ClaimedJob> held = store.jobClaim(c, List.of("bt_bulk"), 2, "w", Duration.ofMinutes(1));
      assertThat(store.jobFail(c, held.get(0), "boom", Duration.ZERO).dead()).isTrue();
      assertThat(store.jobComplete(c, held.get(1))).isTrue();
      assertThat(callbackCount()).isEqualTo(1);
      assertThat(
              new JobAdminStore()
                  .jobAct(
                      c,
                      JobAdminStore.Action.REPLAY,
                      io.pgbus.admin.JobFilter.all().withQueue("bt_bulk"),
                      100,
                      "ops"))
          .isEqualTo(1);
      ClaimedJob again =
          store.jobClaim(c, List.of("bt_bulk"), 1, "w", Duration.ofMinutes(1)).get(0);
      assertThat(again.id()).isEqualTo(held.get(0).id());
      assertThat(store.jobComplete(c, again)).isTrue();
    }
    assertThat(callbackCount()).isEqualTo(1);
    assertThat(db.jobCount("bt_bulk_done", "available")).isEqualTo(1);
    assertThat(summary(batch.batchId())).isEqualTo(new BatchSummary(batch.batchId(), 2, 1, 1, 0));
  }

  @Test
  void aRolledBackBatchLeavesNoBatchAndNoMember() throws Exception {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      jobs.enqueueBatch(
          c, List.of(NewJob.of("bt_rollback", "{}")), NewJob.of("bt_rollback_done", "{}"));
      c.rollback();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.batch")).isZero();
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void anEmptyOrOversizedBatchIsRefusedWithNothingWritten() throws Exception {
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> jobs.enqueueBatch(c, List.of(), NewJob.of("bt_bad_done", "{}")))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("a batch has 1 to 10000 members");
      var tooMany = new ArrayList<NewJob>();
      for (int i = 0; i <= JobBatch.MAX_SIZE; i++) {
        tooMany.add(NewJob.of("bt_bad", "{}"));
      }
      assertThatThrownBy(() -> jobs.enqueueBatch(c, tooMany, NewJob.of("bt_bad_done", "{}")))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("10001 jobs");
      assertThatThrownBy(
              () ->
                  db.queryLong(
                      "SELECT e.batch_id FROM pgbus.enqueue_batch(array_fill('q'::text, ARRAY[10001]),"
                          + " array_fill('{}'::jsonb, ARRAY[10001]), array_fill(0, ARRAY[10001]),"
                          + " array_fill(1, ARRAY[10001]), 'q_done', '{}') e"))
          .rootCause()
          .hasMessageContaining("a batch has 1 to 10000 members");
      assertThatThrownBy(
              () ->
                  JobBatch.withCallback("bt_done", Map.of())
                      .add(
                          "bt_bad",
                          Map.of(),
                          EnqueueOptions.defaults().withDelay(Duration.ofSeconds(1))))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("takes only a priority and attempts");
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.batch")).isZero();
    assertThat(db.jobCount()).isZero();
  }

  private long callbackCount() {
    return db.queryLong("SELECT count(*) FROM pgbus.batch WHERE callback_job_id IS NOT NULL");
  }

  private BatchSummary summary(long id) throws Exception {
    try (Connection c = db.connect()) {
      long cb = db.queryLong("SELECT callback_job_id FROM pgbus.batch WHERE id = ?", id);
      return new LinkStore().batchOfCallback(c, cb).orElseThrow();
    }
  }
}

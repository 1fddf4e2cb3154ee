package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.InvalidJobException;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Unique jobs: at most one job per (queue, unique key) waits or runs. A duplicate inserts nothing,
 * notifies nothing, raises nothing and names the job that holds the key; the partial unique index
 * makes that hold between concurrent transactions too.
 */
class UniqueJobTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final Duration LEASE = Duration.ofMinutes(1);
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final JobStore store = new JobStore();
  private Engine engine;
  private ExecutorService threads;

  @BeforeEach
  void engineWithoutLoops() {
    db.update("DELETE FROM pgbus.job");
    engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    threads = Executors.newCachedThreadPool();
  }

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void aDuplicateReturnsTheExistingIdAndInsertsNoSecondRow() throws Exception {
    try (Connection c = db.connect()) {
      Enqueued first = engine.jobs().enqueueIfAbsent(c, keyed("invoices", "order-42"));
      Enqueued second = engine.jobs().enqueueIfAbsent(c, keyed("invoices", "order-42"));

      assertThat(first.duplicate()).isFalse();
      assertThat(second).isEqualTo(new Enqueued(first.id(), true));
      assertThat(engine.jobs().enqueue(c, keyed("invoices", "order-42"))).isEqualTo(first.id());
    }
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void aDuplicateSendsNoNotification() throws Exception {
    try (Connection c = db.connect()) {
      engine.jobs().enqueueIfAbsent(c, keyed("quiet", "k"));
      try (NotificationListener listener = db.listen("quiet")) {
        assertThat(engine.jobs().enqueueIfAbsent(c, keyed("quiet", "k")).duplicate()).isTrue();

        assertThat(listener.untilBarrier()).isEmpty();
      }
    }
  }

  @Test
  void theSameKeyInAnotherQueueIsNotADuplicate() throws Exception {
    try (Connection c = db.connect()) {
      Enqueued a = engine.jobs().enqueueIfAbsent(c, keyed("queue_a", "shared"));
      Enqueued b = engine.jobs().enqueueIfAbsent(c, keyed("queue_b", "shared"));

      assertThat(a.inserted()).isTrue();
      assertThat(b.inserted()).isTrue();
      assertThat(b.id()).isNotEqualTo(a.id());
    }
  }

  @Test
  void aDelayedRunningOrRetryableJobHoldsItsKey() throws Exception {
    try (Connection c = db.connect()) {
      Enqueued delayed =
          engine
              .jobs()
              .enqueueIfAbsent(
                  c,
                  new NewJob(
                      "held",
                      "{}",
                      EnqueueOptions.defaults()
                          .withDelay(Duration.ofHours(1))
                          .withUniqueKey("later")));
      assertThat(db.job(delayed.id()).state()).isEqualTo("scheduled");
      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("held", "later")).id())
          .isEqualTo(delayed.id());

      long running = engine.jobs().enqueue(c, keyed("held", "now"));
      ClaimedJob job = store.jobClaim(c, List.of("held"), 1, "w", LEASE).get(0);
      assertThat(job.id()).isEqualTo(running);
      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("held", "now")).id()).isEqualTo(running);

      store.jobFail(c, job, "boom", Duration.ofHours(1));
      assertThat(db.job(running).state()).isEqualTo("retryable");
      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("held", "now")).id()).isEqualTo(running);
    }
    assertThat(db.jobCount()).isEqualTo(2);
  }

  @Test
  void afterCompletionANewJobWithTheKeyIsAccepted() throws Exception {
    try (Connection c = db.connect()) {
      long first = engine.jobs().enqueue(c, keyed("again", "daily"));
      ClaimedJob job = store.jobClaim(c, List.of("again"), 1, "w", LEASE).get(0);
      assertThat(store.jobComplete(c, job)).isTrue();

      Enqueued second = engine.jobs().enqueueIfAbsent(c, keyed("again", "daily"));

      assertThat(second.inserted()).isTrue();
      assertThat(second.id()).isNotEqualTo(first);
    }
  }

  @Test
  void aDeadOrCancelledJobFreesItsKey() throws Exception {
    try (Connection c = db.connect()) {
      long dead =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "freed",
                      "{}",
                      EnqueueOptions.defaults().withMaxAttempts(1).withUniqueKey("d")));
      ClaimedJob job = store.jobClaim(c, List.of("freed"), 1, "w", LEASE).get(0);
      assertThat(store.jobFail(c, job, "gave up", Duration.ofSeconds(1)).dead()).isTrue();
      long cancelled = engine.jobs().enqueue(c, keyed("freed", "c"));
      assertThat(engine.jobs().cancel(c, cancelled)).isTrue();

      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("freed", "d")).inserted()).isTrue();
      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("freed", "c")).inserted()).isTrue();
      assertThat(engine.jobs().replay(c, dead))
          .as("a dead job is not replayed while another job holds its key")
          .isFalse();
      assertThat(db.job(dead).state()).isEqualTo("dead");
    }
  }

  @Test
  void aDuplicateLeavesTheCallersTransactionUsable() throws Exception {
    try (Connection c = db.connect()) {
      engine.jobs().enqueue(c, keyed("tx_dup", "k"));
      c.setAutoCommit(false);
      assertThat(engine.jobs().enqueueIfAbsent(c, keyed("tx_dup", "k")).duplicate()).isTrue();
      long other = engine.jobs().enqueue(c, NewJob.of("tx_dup", "{}"));
      c.commit();

      assertThat(db.job(other).state()).isEqualTo("available");
    }
    assertThat(db.jobCount()).isEqualTo(2);
  }

  @Test
  void twoConcurrentTransactionsWithTheSameKeyLeaveExactlyOneRow() throws Exception {
    try (Connection first = db.connect();
        Connection second = db.connect()) {
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      Enqueued mine = engine.jobs().enqueueIfAbsent(first, keyed("race", "k"));

      // The second waits on the first's uncommitted row, neither inserting nor failing.
      Future<Enqueued> theirs =
          threads.submit(() -> engine.jobs().enqueueIfAbsent(second, keyed("race", "k")));
      awaitBlockedOnALock();
      assertThat(theirs).isNotDone();
      first.commit();

      Enqueued result = theirs.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      second.commit();
      assertThat(result).isEqualTo(new Enqueued(mine.id(), true));
    }
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void aRollbackOfTheFirstTransactionFreesTheKeyForTheWaitingOne() throws Exception {
    try (Connection first = db.connect();
        Connection second = db.connect()) {
      first.setAutoCommit(false);
      second.setAutoCommit(false);
      Enqueued mine = engine.jobs().enqueueIfAbsent(first, keyed("rollback", "k"));
      Future<Enqueued> theirs =
          threads.submit(() -> engine.jobs().enqueueIfAbsent(second, keyed("rollback", "k")));
      awaitBlockedOnALock();
      first.rollback();

      Enqueued result = theirs.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      second.commit();
      assertThat(result.inserted()).isTrue();
      assertThat(result.id()).isNotEqualTo(mine.id());
      assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(result.id());
    }
  }

  @Test
  void manyConcurrentEnqueuersOfOneKeyInsertOneJobAndAllGetItsId() throws Exception {
    int n = 8;
    var gate = new CountDownLatch(1);
    var results = new ArrayList<Future<Enqueued>>();
    for (int i = 0; i < n; i++) {
      results.add(
          threads.submit(
              () -> {
                gate.await();
                try (Connection c = db.connect()) {
                  return engine.jobs().enqueueIfAbsent(c, keyed("crowd", "k"));
                }
              }));
    }
    gate.countDown();
    var ids = new ArrayList<Long>();
    int inserted = 0;
    for (Future<Enqueued> r : results) {
      Enqueued e = r.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      ids.add(e.id());
      inserted += e.inserted() ? 1 : 0;
    }

    assertThat(inserted).isEqualTo(1);
    assertThat(ids).containsOnly(ids.get(0));
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void theSqlFunctionTakesAUniqueKeyAndReturnsTheExistingId() throws Exception {
    try (Connection c = db.connect()) {
      long first = sqlEnqueue(c, "sql_unique", "k");
      long second = sqlEnqueue(c, "sql_unique", "k");
      long unkeyed = sqlEnqueue(c, "sql_unique", null);

      assertThat(second).isEqualTo(first);
      assertThat(unkeyed).isNotEqualTo(first);
    }
    assertThat(db.jobCount()).isEqualTo(2);
  }

  @Test
  void aBatchWithKeysReturnsTheHoldersIdForEachDuplicate() throws Exception {
    try (Connection c = db.connect()) {
      long waiting = engine.jobs().enqueue(c, keyed("batch_unique", "a"));

      List<Long> ids =
          engine
              .jobs()
              .enqueueAll(
                  c,
                  List.of(
                      keyed("batch_unique", "a"),
                      keyed("batch_unique", "b"),
                      NewJob.of("batch_unique", "{}"),
                      keyed("batch_unique", "b")));

      assertThat(ids).hasSize(4);
      assertThat(ids.get(0)).isEqualTo(waiting);
      assertThat(ids.get(3)).isEqualTo(ids.get(1));
      assertThat(ids.get(2)).isNotIn(waiting, ids.get(1));
    }
    assertThat(db.jobCount()).isEqualTo(3);
  }

  @Test
  void aBadUniqueKeyIsRefusedWithTheRule() {
    assertThatThrownBy(() -> EnqueueOptions.defaults().withUniqueKey(" "))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("must not be blank");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withUniqueKey(null))
        .hasMessageContaining("must not be null");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withUniqueKey("x".repeat(256)))
        .hasMessageContaining("256 characters long: use at most 255");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withUniqueKey("a\nb"))
        .hasMessageContaining("'a?b' contains a control character");
    assertThat(EnqueueOptions.defaults().withUniqueKey("x".repeat(255)).uniqueKey()).hasSize(255);
  }

  @Test
  void theOtherOptionsKeepTheKey() {
    EnqueueOptions o =
        EnqueueOptions.defaults()
            .withUniqueKey("k")
            .withPriority(3)
            .withMaxAttempts(2)
            .withDelay(Duration.ofSeconds(1));
    assertThat(o.uniqueKey()).isEqualTo("k");
    assertThat(JobFixtures.job("q", 1, o).options().uniqueKey()).isEqualTo("k");
  }

  private static NewJob keyed(String queue, String key) {
    return new NewJob(queue, "{}", EnqueueOptions.defaults().withUniqueKey(key));
  }

  private static long sqlEnqueue(Connection c, String queue, String key) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT pgbus.enqueue(?, '{}', unique_key => ?)")) {
      ps.setString(1, queue);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Waits until some backend of the test database waits on a lock (the second enqueuer). */
  private static void awaitBlockedOnALock() {
    io.pgbus.engine.testing.Await.until(
        "the second enqueue to wait on the first's row",
        WAIT,
        () ->
            db.queryLong(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND wait_event_type = 'Lock'")
                > 0);
  }
}

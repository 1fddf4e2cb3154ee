package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A capsule's ordered queue list wins over everything: every claimable job of an earlier queue is
 * taken before a later queue is even looked at. Inside a queue: priority (lower first), then
 * run_at, then id.
 */
class StrictPriorityClaimTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final List<String> QUEUES = List.of("first", "second", "third");
  private static final Duration LEASE = Duration.ofMinutes(5);

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void claimsEarlierQueuesFirstWhateverThePriorityOrAgeOfLaterOnes() throws Exception {
    Instant longAgo = Instant.now().minus(1, ChronoUnit.DAYS);
    long thirdOldestAndUrgent =
        jobs.enqueue("third", EnqueueOptions.defaults().withPriority(-100).withRunAt(longAgo));
    long secondUrgent = jobs.enqueue("second", EnqueueOptions.defaults().withPriority(-100));
    long firstLowest = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(100));

    List<Long> order = claimIds(QUEUES, 10);

    assertThat(order).containsExactly(firstLowest, secondUrgent, thirdOldestAndUrgent);
  }

  @Test
  void ordersJobsInsideAQueueByPriorityThenRunAtThenId() throws Exception {
    Instant t0 = Instant.now().minus(1, ChronoUnit.HOURS);
    Instant t1 = t0.plusSeconds(60);
    long p5Late = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(5).withRunAt(t1));
    long p5EarlyA = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(5).withRunAt(t0));
    long p5EarlyB = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(5).withRunAt(t0));
    long pMinus1 = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(-1).withRunAt(t1));
    long p0 = jobs.enqueue("first", EnqueueOptions.defaults().withRunAt(t1));

    assertThat(claimIds(List.of("first"), 10))
        .containsExactly(pMinus1, p0, p5EarlyA, p5EarlyB, p5Late);
  }

  @Test
  void aSmallClaimLeavesLaterQueuesUntouchedWhileAnEarlierQueueHasJobs() throws Exception {
    List<Long> first = jobs.enqueue("first", 5);
    List<Long> second = jobs.enqueue("second", 5);
    List<Long> third = jobs.enqueue("third", 5);

    try (Connection claimer = db.connect();
        Connection prober = db.connect()) {
      claimer.setAutoCommit(false);
      List<ClaimedJob> claimed = store.jobClaim(claimer, QUEUES, 3, "w", LEASE);

      assertThat(ids(claimed)).containsExactlyElementsOf(first.subList(0, 3));
      // The claim's transaction is still open: every row it did not claim must be unlocked.
      prober.setAutoCommit(false);
      assertThat(lockableNowait(prober, first.subList(3, 5))).containsOnly(true);
      assertThat(lockableNowait(prober, second)).containsOnly(true);
      assertThat(lockableNowait(prober, third)).containsOnly(true);
      // ...while the claimed ones are locked (so the probe can tell the difference).
      assertThat(lockableNowait(prober, first.subList(0, 3))).containsOnly(false);
      prober.rollback();
      claimer.commit();
    }

    for (long id : concat(first.subList(3, 5), second, third)) {
      JobRow row = db.job(id);
      assertThat(row.state()).as("state of job %d", id).isEqualTo("available");
      assertThat(row.attempt()).as("attempt of job %d", id).isZero();
      assertThat(row.attemptedBy()).isNull();
    }
  }

  @Test
  void aClaimThatSpillsIntoTheNextQueueLocksOnlyWhatItTakesThere() throws Exception {
    List<Long> first = jobs.enqueue("first", 2);
    List<Long> second = jobs.enqueue("second", 5);
    List<Long> third = jobs.enqueue("third", 5);

    try (Connection claimer = db.connect();
        Connection prober = db.connect()) {
      claimer.setAutoCommit(false);
      List<ClaimedJob> claimed = store.jobClaim(claimer, QUEUES, 4, "w", LEASE);

      assertThat(ids(claimed)).containsExactlyElementsOf(concat(first, second.subList(0, 2)));
      prober.setAutoCommit(false);
      assertThat(lockableNowait(prober, second.subList(2, 5))).containsOnly(true);
      assertThat(lockableNowait(prober, third)).containsOnly(true);
      prober.rollback();
      claimer.commit();
    }

    assertThat(db.jobCount("second", "available")).isEqualTo(3);
    assertThat(db.jobCount("third", "available")).isEqualTo(5);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'third' AND attempt > 0"))
        .isZero();
  }

  @Test
  void skipsJobsThatAreNotDueYet() throws Exception {
    jobs.enqueue("first", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long due = jobs.enqueue("second");

    assertThat(claimIds(QUEUES, 1)).containsExactly(due);
  }

  @Test
  void aCapsuleWithOneSlotRunsJobsInStrictQueueOrder() throws Exception {
    var expected = new ArrayList<Long>();
    // Enqueued in reverse so that id order alone would give the wrong answer.
    List<Long> third = jobs.enqueue("third", 3, EnqueueOptions.defaults().withPriority(-100));
    List<Long> second = jobs.enqueue("second", 3);
    long firstLow = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(50));
    long firstHigh = jobs.enqueue("first", EnqueueOptions.defaults().withPriority(-50));
    expected.add(firstHigh);
    expected.add(firstLow);
    expected.addAll(second);
    expected.addAll(third);
    var ran = new CopyOnWriteArrayList<Long>();
    var events = new RecordingEvents();

    engines.start(
        engines
            .builder(engines.config().capsule("ordered", 1, "first", "second", "third").build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  ran.add(job.id());
                  return Outcome.complete();
                }));
    events.awaitFinished(Outcome.Kind.COMPLETE, expected.size(), Duration.ofSeconds(30));

    assertThat(ran).containsExactlyElementsOf(expected);
  }

  private List<Long> claimIds(List<String> queues, int max) throws SQLException {
    try (Connection c = db.connect()) {
      return ids(store.jobClaim(c, queues, max, "w", LEASE));
    }
  }

  /** For each row: could another transaction lock it at once (FOR UPDATE NOWAIT)? */
  private static List<Boolean> lockableNowait(Connection c, List<Long> ids) throws SQLException {
    var out = new ArrayList<Boolean>();
    for (long id : ids) {
      try (PreparedStatement sp = c.prepareStatement("SAVEPOINT probe")) {
        sp.execute();
      }
      try (PreparedStatement ps =
          c.prepareStatement("SELECT id FROM pgbus.job WHERE id = ? FOR UPDATE NOWAIT")) {
        ps.setLong(1, id);
        ps.executeQuery().close();
        out.add(true);
      } catch (SQLException e) {
        assertThat(e.getSQLState()).as("lock_not_available").isEqualTo("55P03");
        try (PreparedStatement rb = c.prepareStatement("ROLLBACK TO SAVEPOINT probe")) {
          rb.execute();
        }
        out.add(false);
      }
    }
    return out;
  }

  private static List<Long> ids(List<ClaimedJob> jobs) {
    return jobs.stream().map(ClaimedJob::id).toList();
  }

  @SafeVarargs
  private static List<Long> concat(List<Long>... lists) {
    var out = new ArrayList<Long>();
    for (List<Long> l : lists) {
      out.addAll(l);
    }
    return out;
  }
}

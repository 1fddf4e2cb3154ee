package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A capsule with jobs-per-transaction above 1 runs several jobs in one transaction: each job's
 * business writes still commit exactly with its completion, and a failing handler costs its
 * neighbours a second run in a transaction of their own, never an attempt.
 */
class JobsPerTransactionTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final RetryPolicy QUICK_RETRY =
      new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), 0);

  private final Map<Long, Integer> runs = new ConcurrentHashMap<>();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint PRIMARY KEY, txid bigint)");
    db.update("DELETE FROM business");
  }

  @Test
  void runsSeveralJobsInOneTransactionEachCommittingWithItsWrites() {
    List<Long> ids = JobFixtures.in(db).enqueue("batched", 200);
    var events = new RecordingEvents();

    start(
        new CapsuleConfig("batched", List.of("batched"), 2, 10),
        events,
        (job, tx) -> {
          write(tx, job);
          return Outcome.complete();
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(30));

    assertThat(db.jobCount("batched", "completed")).isEqualTo(ids.size());
    assertThat(db.queryLong("SELECT count(*) FROM business")).isEqualTo(ids.size());
    assertThat(runs.values()).as("runs per job").containsOnly(1);
    // 200 jobs, at most 10 per transaction: at least 20 transactions, far fewer than 200.
    assertThat(db.queryLong("SELECT count(DISTINCT txid) FROM business")).isBetween(20L, 60L);
    assertThat(events.started()).hasSize(ids.size());
  }

  @Test
  void aThrowingHandlerRollsBackItsTransactionAndItsNeighboursRunAgainAlone() {
    List<Long> ids = JobFixtures.in(db).enqueue("neighbours", 5);
    long bad = ids.get(2);
    var events = new RecordingEvents();

    start(
        new CapsuleConfig("n", List.of("neighbours"), 1, 5),
        events,
        (job, tx) -> {
          write(tx, job);
          if (job.id() == bad && job.attempt() == 1) {
            throw new IllegalStateException("job " + bad + " fails its first attempt");
          }
          return Outcome.complete();
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(30));

    for (long id : ids) {
      JobRow row = db.job(id);
      assertThat(row.state()).isEqualTo("completed");
      assertThat(row.attempt()).as("attempts of job %s", id).isEqualTo(id == bad ? 2 : 1);
    }
    assertThat(db.job(bad).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("fails its first attempt"));
    assertThat(db.queryLongs("SELECT job_id FROM business ORDER BY job_id"))
        .as("one committed business row per job")
        .containsExactlyElementsOf(ids);
    // The two before the bad one ran in the rolled-back transaction and again alone; the two
    // after it never ran in the batch.
    assertThat(runs).containsEntry(ids.get(0), 2).containsEntry(ids.get(1), 2);
    assertThat(runs).containsEntry(ids.get(3), 1).containsEntry(ids.get(4), 1);
    assertThat(runs).containsEntry(bad, 2);
    assertThat(events.started()).as("started once per attempt").hasSize(ids.size() + 1);
  }

  @Test
  void aJobRunAgainAloneGetsAFreshLeaseRightBeforeItRunsNotBeforeItsNeighbours() {
    Duration lease = Duration.ofSeconds(6);
    Duration slowRerun = Duration.ofSeconds(2);
    List<Long> ids = JobFixtures.in(db).enqueue("renewed", 3);
    long bad = ids.get(0);
    long slow = ids.get(1);
    long last = ids.get(2);
    var leaseLeftAtRerun = new ConcurrentHashMap<Long, Double>();
    var events = new RecordingEvents();

    start(
        engines
            .config()
            .retry(QUICK_RETRY)
            .lease(lease)
            .capsule(new CapsuleConfig("r", List.of("renewed"), 1, 3))
            .build(),
        events,
        (job, tx) -> {
          if (job.id() == bad && job.attempt() == 1) {
            throw new IllegalStateException("job " + bad + " fails its first attempt");
          }
          if (runs.get(job.id()) > 1 || job.id() == last) {
            leaseLeftAtRerun.put(job.id(), leaseLeft(tx, job));
          }
          if (job.id() == slow) {
            Thread.sleep(slowRerun.toMillis()); // a handler that takes its time, on purpose
          }
          return Outcome.complete();
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(30));

    // The last job reran after the slow one took 2 s: with the leases renewed up front, it would
    // have had about 4 s of its 6 s left.
    assertThat(leaseLeftAtRerun.get(last))
        .as("seconds of lease left when the last job reran")
        .isGreaterThan(lease.minus(slowRerun).getSeconds() + 1.0);
  }

  @Test
  void aHandlerThatMeetsTheAbortedTransactionOfAnEarlierOneIsNotBlamed() {
    List<Long> ids = JobFixtures.in(db).enqueue("aborted", 2);
    long careless = ids.get(0);
    var events = new RecordingEvents();

    // The first handler swallows a failed statement, which leaves the transaction aborted; the
    // second one's first statement then fails with 25P02.
    start(
        new CapsuleConfig("a", List.of("aborted"), 1, 2),
        events,
        (job, tx) -> {
          if (job.id() == careless && job.attempt() == 1) {
            try (PreparedStatement ps = tx.prepareStatement("SELECT 1 / 0")) {
              ps.execute();
            } catch (SQLException swallowed) {
              return Outcome.complete(); // the careless part
            }
          }
          write(tx, job);
          return Outcome.complete();
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(30));

    assertThat(db.job(ids.get(1)).attempt()).as("the innocent job spends no attempt").isEqualTo(1);
    assertThat(db.job(ids.get(1)).errors()).isEmpty();
    assertThat(db.job(careless).attempt()).isEqualTo(2);
    assertThat(db.job(careless).errors()).hasSize(1);
  }

  @Test
  void aHandlerThatOverrunsItsOwnTimeoutInAGroupFailsOnlyItself() {
    List<Long> ids = JobFixtures.in(db).enqueue("slow", 3);
    long slow = ids.get(1);
    var events = new RecordingEvents();

    start(
        engines
            .config()
            .jobTimeout(Duration.ofMillis(500))
            .retry(QUICK_RETRY)
            .capsule(new CapsuleConfig("s", List.of("slow"), 1, 3))
            .build(),
        events,
        (job, tx) -> {
          write(tx, job);
          if (job.id() == slow && job.attempt() == 1) {
            Thread.sleep(10_000); // interrupted by the timeout
          }
          return Outcome.complete();
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), Duration.ofSeconds(30));

    assertThat(db.job(slow).attempt()).isEqualTo(2);
    assertThat(db.job(slow).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("timed out"));
    assertThat(db.job(ids.get(0)).attempt()).isEqualTo(1);
    assertThat(db.job(ids.get(2)).attempt()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM business")).isEqualTo(3);
  }

  @Test
  void everyOutcomeSettlesInTheSharedTransaction() {
    List<Long> ids = JobFixtures.in(db).enqueue("outcomes", 4);
    var events = new RecordingEvents();

    start(
        new CapsuleConfig("o", List.of("outcomes"), 1, 4),
        events,
        (job, tx) -> {
          if (job.attempt() > 1) {
            return Outcome.complete(); // the retried job, alone this time
          }
          write(tx, job);
          return switch (ids.indexOf(job.id())) {
            case 0 -> Outcome.snooze(Duration.ofHours(1));
            case 1 -> Outcome.cancel("not wanted");
            case 2 -> Outcome.retry("try later");
            default -> Outcome.complete();
          };
        });
    events.awaitFinished(Outcome.Kind.COMPLETE, 2, Duration.ofSeconds(30));

    assertThat(db.job(ids.get(0)).state()).isEqualTo("scheduled");
    assertThat(db.job(ids.get(1)).state()).isEqualTo("cancelled");
    assertThat(db.job(ids.get(2)).state()).isEqualTo("completed");
    assertThat(db.job(ids.get(2)).attempt()).isEqualTo(2);
    assertThat(db.job(ids.get(2)).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("try later"));
    assertThat(db.job(ids.get(3)).state()).isEqualTo("completed");
    assertThat(db.queryLong("SELECT count(*) FROM business")).isEqualTo(4);
    assertThat(db.queryLong("SELECT count(DISTINCT txid) FROM business"))
        .as("the four first attempts wrote and settled in one transaction")
        .isEqualTo(1);
  }

  @Test
  void completesManyJobsOnlyWhileEachIsStillHeld() throws Exception {
    var store = new JobStore();
    JobFixtures.in(db).enqueue("fence_many", 3);
    try (Connection c = db.connect()) {
      List<ClaimedJob> held =
          store.jobClaim(c, List.of("fence_many"), 3, "w", Duration.ofMinutes(1));
      ClaimedJob stale = ClaimedJobs.nextAttempt(held.get(0));

      assertThat(store.jobCompleteMany(c, List.of(stale, held.get(1)))).isEqualTo(1);
      assertThat(store.jobExtendLeases(c, held, Duration.ofMinutes(5))).isEqualTo(2);
      assertThat(store.jobCompleteMany(c, held)).isEqualTo(2);
    }
    assertThat(db.jobCount("fence_many", "completed")).isEqualTo(3);
  }

  @Test
  void theClaimDealsItsJobsOverTheFreeSlotsRoundRobinInClaimOrder() throws Exception {
    assertThat(sizes(dealt("deal80", 80, 80, 8))).containsExactly(10, 10, 10, 10, 10, 10, 10, 10);
    assertThat(sizes(dealt("deal5", 5, 16, 8))).containsExactly(1, 1, 1, 1, 1);
    assertThat(sizes(dealt("deal20", 20, 24, 8))).containsExactly(3, 3, 3, 3, 2, 2, 2, 2);
    assertThat(dealt("deal0", 0, 8, 8)).isEmpty();
    List<Long> ids = JobFixtures.in(db).enqueue("deal7", 7);
    List<List<ClaimedJob>> slots;
    try (Connection c = db.connect()) {
      slots = new JobStore().jobClaimInLanes(c, List.of("deal7"), 9, 3, "w", Duration.ofMinutes(1));
    }
    assertThat(slots)
        .as("parallelism first: the first three jobs start at once, each lane in claim order")
        .map(slot -> slot.stream().map(ClaimedJob::id).toList())
        .containsExactly(
            List.of(ids.get(0), ids.get(3), ids.get(6)),
            List.of(ids.get(1), ids.get(4)),
            List.of(ids.get(2), ids.get(5)));
  }

  private List<List<ClaimedJob>> dealt(String queue, int waiting, int max, int lanes)
      throws Exception {
    if (waiting > 0) {
      JobFixtures.in(db).enqueue(queue, waiting);
    }
    try (Connection c = db.connect()) {
      return new JobStore()
          .jobClaimInLanes(c, List.of(queue), max, lanes, "w", Duration.ofMinutes(1));
    }
  }

  @Test
  void refusesJobsPerTransactionOutOfRange() {
    assertThatThrownBy(() -> new CapsuleConfig("c", List.of("q"), 1, -1))
        .hasMessageContaining(
            "capsule 'c' jobs-per-transaction -1 is out of range: use auto (CapsuleConfig.AUTO) or"
                + " 1 to 100");
    assertThat(new CapsuleConfig("c", List.of("q"), 1).adaptive()).as("the default").isTrue();
    assertThatThrownBy(() -> new CapsuleConfig("c", List.of("q"), 1, 101))
        .hasMessageContaining("jobs-per-transaction 101");
  }

  private void start(CapsuleConfig capsule, RecordingEvents events, JobFunction handler) {
    start(engines.config().retry(QUICK_RETRY).capsule(capsule).build(), events, handler);
  }

  private void start(EngineConfig config, RecordingEvents events, JobFunction handler) {
    engines.start(
        engines
            .builder(config)
            .events(events)
            .jobs(
                (job, tx) -> {
                  runs.merge(job.id(), 1, Integer::sum);
                  return handler.run(job, tx);
                }));
  }

  private static void write(Connection tx, RunningJob job) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement("INSERT INTO business VALUES (?, txid_current())")) {
      ps.setLong(1, job.id());
      ps.executeUpdate();
    }
  }

  /** Seconds left on the job's lease, as its own transaction sees it. */
  private static double leaseLeft(Connection tx, RunningJob job) throws SQLException {
    try (PreparedStatement ps =
        tx.prepareStatement(
            "SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) FROM pgbus.job"
                + " WHERE id = ?")) {
      ps.setLong(1, job.id());
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getDouble(1);
      }
    }
  }

  private static List<Integer> sizes(List<List<ClaimedJob>> slots) {
    return slots.stream().map(List::size).toList();
  }
}

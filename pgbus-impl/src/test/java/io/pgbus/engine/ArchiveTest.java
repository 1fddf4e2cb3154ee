package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedBatch;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.engine.JobAdminStore.Action;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Completed and cancelled jobs move from pgbus.job into the day partitions of pgbus.job_history
 * (V33), where every reader still finds them, and leave by whole partitions: never in both tables,
 * never in neither, whatever runs at the same time.
 */
class ArchiveTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach(
              "pgbus.job", "pgbus.job_history", "pgbus.batch", "pgbus.job_dependency");

  private static final Duration RETENTION = Duration.ofDays(3);

  private final JobStore store = new JobStore();
  private final ArchiveStore archive = new ArchiveStore();
  private final JobAdminStore admin = new JobAdminStore();
  private final Jobs jobs = new Jobs("archive-test", 1 << 20, JobTracing.NONE);

  @Test
  void completedAndCancelledJobsMoveAfterTheGraceWhileDeadAndRecentOnesStay() throws Exception {
    long completed = completed("arc", "{\"answer\":42}");
    long cancelled = enqueue("arc", EnqueueOptions.defaults());
    try (Connection c = db.connect()) {
      assertThat(store.jobCancel(c, cancelled, "ops")).isTrue();
    }
    long dead = dead("arc");
    long recent = completed("arc", null);
    age(completed, Duration.ofMinutes(10));
    age(cancelled, Duration.ofMinutes(10));
    age(dead, Duration.ofMinutes(10));

    long moved = round(RETENTION).moved();

    assertThat(moved).isEqualTo(2);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job ORDER BY id")).containsExactly(dead, recent);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history ORDER BY id"))
        .containsExactly(completed, cancelled);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history_default")).isZero();
    try (Connection c = db.connect()) {
      JobView view = admin.jobView(c, completed).orElseThrow();
      assertThat(view.state()).isEqualTo(JobState.COMPLETED);
      assertThat(view.result()).isEqualTo("{\"answer\": 42}");
      assertThat(admin.jobView(c, cancelled).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
      var page =
          admin.jobSearch(
              c, JobFilter.all().withStates(JobState.COMPLETED, JobState.CANCELLED), null, 10);
      assertThat(page.jobs()).extracting(JobView::id).containsExactly(recent, cancelled, completed);
      var inQueue =
          admin.jobSearch(
              c, JobFilter.all().withQueue("arc").withStates(JobState.COMPLETED), null, 10);
      assertThat(inQueue.jobs()).extracting(JobView::id).containsExactly(recent, completed);
    }
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM (SELECT pgbus.explain(?) AS e) x"
                    + " WHERE x.e->>'state' = 'completed'",
                completed))
        .as("explain finds the moved job")
        .isEqualTo(1);
  }

  @Test
  void theLeadersMaintenanceMovesFinishedJobsOnItsOwn() throws Exception {
    long id = completed("arc_leader", "{\"done\":true}");
    age(id, Duration.ofMinutes(5));
    var maintainer =
        new Maintainer(
            db.dataSource(),
            store,
            new MaintainerConfig(
                Duration.ofHours(1),
                Duration.ofHours(1),
                Duration.ofMinutes(5),
                Duration.ofDays(7)),
            RetentionConfig.from(SettingSource.DEFAULTS),
            () -> true,
            null,
            Duration.ofHours(1),
            Duration.ofHours(1));
    Thread loop = new Thread(maintainer, "maintainer");
    loop.start();
    try {
      Await.until(
          "the leader to move the job",
          Duration.ofSeconds(30),
          () -> db.queryLongs("SELECT id FROM pgbus.job_history"),
          ids -> ids.contains(id));
      // The counter moves after the statement returns, on the maintainer's thread: a moment after
      // the row is seen in the history (read too early once on a loaded machine).
      Await.until("the move counted", Duration.ofSeconds(10), maintainer::archived, n -> n >= 1);
      assertThat(maintainer.archived()).isEqualTo(1);
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ?", id)).isZero();
    } finally {
      maintainer.stop(Duration.ofSeconds(5));
    }
  }

  @Test
  void theOperatorsDeleteReachesJobsInEitherTable() throws Exception {
    long old = completed("arc_del", null);
    long recent = completed("arc_del", null);
    age(old, Duration.ofMinutes(10));
    round(RETENTION);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history")).containsExactly(old);
    try (Connection c = db.connect()) {
      assertThat(
              admin.jobAct(
                  c,
                  Action.DELETE,
                  JobFilter.all().withQueue("arc_del").withStates(JobState.COMPLETED),
                  10,
                  "ops"))
          .isEqualTo(2);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_all WHERE id IN (?, ?)", old, recent))
        .isZero();
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'delete' AND job_id IN (?, ?)",
                old,
                recent))
        .isEqualTo(2);
  }

  @Test
  void retentionDropsWholeDaysPastItAndKeepsTheRest() throws Exception {
    long twoDays = completed("arc_ret", null);
    long hourOld = completed("arc_ret", null);
    age(twoDays, Duration.ofHours(50));
    age(hourOld, Duration.ofHours(1));
    round(RETENTION);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history ORDER BY id"))
        .containsExactly(twoDays, hourOld);
    LocalDate oldDay = dayOf(twoDays);
    assertThat(partitionExists(oldDay)).isTrue();
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    for (int ahead = 0; ahead <= ArchiveStore.DAYS_AHEAD; ahead++) {
      assertThat(partitionExists(today.plusDays(ahead))).as("partition ahead " + ahead).isTrue();
    }

    // A retention of a day: the day of the old job ended at least a day ago, today's did not.
    ArchiveStore.Round r = round(Duration.ofDays(1));

    assertThat(r.dropped()).isGreaterThanOrEqualTo(1);
    assertThat(partitionExists(oldDay)).isFalse();
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history")).contains(hourOld);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_all WHERE id = ?", twoDays)).isEmpty();
  }

  @Test
  void aDayIsDroppedWhileJobsMoveAndReadersReadWithoutLosingAKeptJob() throws Exception {
    List<Long> old = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      long id = completed("arc_load", null);
      age(id, Duration.ofHours(50));
      old.add(id);
    }
    round(RETENTION);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history")).isEqualTo(20);
    List<Long> recent = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      long id = completed("arc_load", null);
      age(id, Duration.ofMinutes(10));
      recent.add(id);
    }
    var stop = new AtomicBoolean();
    var reads = new AtomicLong();
    Long[] kept = recent.toArray(Long[]::new);
    CompletableFuture<Void> reader =
        CompletableFuture.runAsync(
            () -> {
              try (Connection c = db.connect();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT pg_catalog.count(*) FROM pgbus.job_all WHERE id = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("bigint", kept));
                while (!stop.get()) {
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("kept jobs seen").isEqualTo(200);
                  }
                  reads.incrementAndGet();
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    CompletableFuture<Long> mover =
        CompletableFuture.supplyAsync(
            () -> {
              long n = 0;
              try (Connection c = db.connect()) {
                var now = java.time.Instant.now();
                int m;
                do {
                  m = archive.move(c, now.minus(RETENTION), now.minus(ArchiveStore.GRACE), 5);
                  n += m;
                } while (m > 0);
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
              return n;
            });

    ArchiveStore.Round r = round(Duration.ofDays(1)); // drops the old day, moves with the mover

    long moved = mover.get() + r.moved();
    stop.set(true);
    reader.get();
    assertThat(r.dropped()).isGreaterThanOrEqualTo(1);
    assertThat(moved).isEqualTo(200);
    assertThat(reads.get()).isPositive();
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history ORDER BY id"))
        .containsExactlyElementsOf(recent);
  }

  @Test
  void aRetentionShorterThanADayKeepsJobsInTheLiveTable() throws Exception {
    long id = completed("arc_short", null);
    age(id, Duration.ofMinutes(10));
    assertThat(round(Duration.ofHours(1)).moved()).isZero();
    assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(id);
  }

  @Test
  void eachMoveTakesABoundedBatch() throws Exception {
    for (int i = 0; i < 25; i++) {
      age(completed("arc_batch", null), Duration.ofMinutes(5));
    }
    var now = java.time.Instant.now();
    round(RETENTION); // partitions; moves everything in batches of 10
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history")).isEqualTo(25);
    for (int i = 0; i < 25; i++) {
      age(completed("arc_batch", null), Duration.ofMinutes(5));
    }
    try (Connection c = db.connect()) {
      assertThat(archive.move(c, now.minus(RETENTION), now.minus(ArchiveStore.GRACE), 10))
          .isEqualTo(10);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job")).isEqualTo(15);
  }

  @Test
  void aDependencyInTheHistoryCountsAsCompletedWithItsResult() throws Exception {
    long a = completed("arc_dep", "{\"from\":\"a\"}");
    age(a, Duration.ofMinutes(10));
    round(RETENTION);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history")).containsExactly(a);

    long b = enqueue("arc_dep", EnqueueOptions.defaults().afterJobs(a));

    assertThat(db.job(b).state()).isEqualTo("available");
    try (Connection c = db.connect()) {
      assertThat(new LinkStore().dependencyResults(c, b)).containsEntry(a, "{\"from\": \"a\"}");
    }
  }

  @Test
  void batchMembersMoveOnlyOnceTheCallbackRanAndKeepTheirBatchAndResults() throws Exception {
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(NewJob.of("arc_batch_m", "{}"), NewJob.of("arc_batch_m", "{}")),
              NewJob.of("arc_batch_cb", "{}"));
    }
    completeAll("arc_batch_m", "{\"m\":1}");
    long callback =
        db.queryLong("SELECT callback_job_id FROM pgbus.batch WHERE id = ?", batch.batchId());
    for (long m : batch.jobIds()) {
      age(m, Duration.ofMinutes(10));
    }
    round(RETENTION);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history"))
        .as("members wait for their callback")
        .isZero();

    completeAll("arc_batch_cb", null);
    round(RETENTION);

    assertThat(db.queryLongs("SELECT id FROM pgbus.job_history ORDER BY id"))
        .containsExactlyElementsOf(batch.jobIds());
    try (Connection c = db.connect()) {
      assertThat(new LinkStore().batchResults(c, callback, 0, 10)).hasSize(2);
      assertThat(new LinkStore().batchPrune(c, Duration.ZERO, 10))
          .as("members left in the history")
          .isZero();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.batch")).isEqualTo(1);
  }

  /**
   * The move, an operator's replays of dead jobs and the prune of dead ones, all at once: every
   * statement that reads pgbus.job_all sees each surviving job exactly once.
   */
  @Test
  void aJobIsNeverInTwoPlacesNorInNoneWhileMovesRaceReplaysAndPrunes() throws Exception {
    List<Long> finished = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      long id = completed("arc_race", null);
      age(id, Duration.ofMinutes(10));
      finished.add(id);
    }
    List<Long> dead = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      long id = dead("arc_race");
      age(id, Duration.ofDays(20)); // past the dead retention: the prune wants them
      dead.add(id);
    }
    try (Connection c = db.connect()) {
      archive.create(c, LocalDate.now(ZoneOffset.UTC)); // today's partition, so moves start at once
      archive.create(c, LocalDate.now(ZoneOffset.UTC).minusDays(1));
    }
    var stop = new AtomicBoolean();
    var reads = new AtomicLong();
    Long[] ids = finished.toArray(Long[]::new);
    CompletableFuture<Void> reader =
        CompletableFuture.runAsync(
            () -> {
              try (Connection c = db.connect();
                  PreparedStatement ps =
                      c.prepareStatement(
                          "SELECT pg_catalog.count(*), pg_catalog.count(DISTINCT id) FROM pgbus.job_all"
                              + " WHERE id = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("bigint", ids));
                while (!stop.get()) {
                  try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("rows of the finished jobs").isEqualTo(300);
                    assertThat(rs.getLong(2)).isEqualTo(300);
                  }
                  reads.incrementAndGet();
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    CompletableFuture<Integer> replays =
        CompletableFuture.supplyAsync(
            () -> {
              int n = 0;
              try (Connection c = db.connect()) {
                for (int i = 0; i < dead.size(); i += 2) {
                  n += store.jobReplayDead(c, dead.get(i), "ops") ? 1 : 0;
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
              return n;
            });
    CompletableFuture<Integer> prunes =
        CompletableFuture.supplyAsync(
            () -> {
              int n = 0;
              try (Connection c = db.connect()) {
                for (int i = 0; i < 20; i++) {
                  n += store.jobPrune(c, "dead", Duration.ofDays(14), 2);
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
              return n;
            });
    long moved = 0;
    try (Connection c = db.connect()) {
      var now = java.time.Instant.now();
      int n;
      do {
        n = archive.move(c, now.minus(RETENTION), now.minus(ArchiveStore.GRACE), 7);
        moved += n;
      } while (n > 0);
    }
    int replayed = replays.get();
    int pruned = prunes.get();
    stop.set(true);
    reader.get();

    assertThat(moved).isEqualTo(300);
    assertThat(reads.get()).isPositive();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history")).isEqualTo(300);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM (SELECT id FROM pgbus.job_all GROUP BY id"
                    + " HAVING count(*) > 1) d"))
        .isZero();
    // Every dead job is replayed (available), pruned, or still dead: none lost to the race.
    long available =
        db.queryLong(
            "SELECT count(*) FROM pgbus.job WHERE queue = 'arc_race' AND state = 'available'");
    long stillDead =
        db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'arc_race' AND state = 'dead'");
    assertThat(available).isEqualTo(replayed);
    assertThat(available + stillDead + pruned).isEqualTo(dead.size());
  }

  private ArchiveStore.Round round(Duration retention) throws SQLException {
    try (Connection c = db.connect()) {
      return archive.archive(c, retention, 10);
    }
  }

  private long enqueue(String queue, EnqueueOptions options) throws SQLException {
    try (Connection c = db.connect()) {
      return jobs.enqueue(c, new NewJob(queue, "{}", options));
    }
  }

  private long completed(String queue, String result) throws SQLException {
    long id = enqueue(queue, EnqueueOptions.defaults());
    try (Connection c = db.connect()) {
      ClaimedJob job = claimOne(c, queue, id);
      if (result == null) {
        assertThat(store.jobComplete(c, job)).isTrue();
      } else {
        assertThat(store.jobCompleteWithResult(c, job, result)).isTrue();
      }
    }
    return id;
  }

  private long dead(String queue) throws SQLException {
    long id = enqueue(queue, EnqueueOptions.defaults().withMaxAttempts(1));
    try (Connection c = db.connect()) {
      assertThat(store.jobFail(c, claimOne(c, queue, id), "boom", Duration.ZERO).dead()).isTrue();
    }
    return id;
  }

  private void completeAll(String queue, String result) throws SQLException {
    try (Connection c = db.connect()) {
      for (ClaimedJob job : store.jobClaim(c, List.of(queue), 100, "w", Duration.ofMinutes(1))) {
        c.setAutoCommit(false);
        if (result == null) {
          store.jobComplete(c, job);
        } else {
          store.jobCompleteWithResult(c, job, result);
        }
        c.commit();
        c.setAutoCommit(true);
      }
    }
  }

  private ClaimedJob claimOne(Connection c, String queue, long id) throws SQLException {
    List<ClaimedJob> claimed = store.jobClaim(c, List.of(queue), 1, "w", Duration.ofMinutes(1));
    assertThat(claimed).extracting(ClaimedJob::id).containsExactly(id);
    return claimed.get(0);
  }

  private static void age(long id, Duration by) {
    db.update(
        "UPDATE pgbus.job SET finalized_at = finalized_at - ?::float8 * interval '1 millisecond'"
            + " WHERE id = ?",
        (double) by.toMillis(),
        id);
  }

  private static LocalDate dayOf(long id) {
    return LocalDate.ofInstant(
        java.time.Instant.ofEpochMilli(
            db.queryLong(
                "SELECT (extract(epoch FROM finalized_at) * 1000)::bigint FROM pgbus.job_all"
                    + " WHERE id = ?",
                id)),
        ZoneOffset.UTC);
  }

  private static boolean partitionExists(LocalDate day) {
    return db.queryLong(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = 'pgbus' AND c.relname = ?",
            ArchiveStore.name(day))
        == 1;
  }
}

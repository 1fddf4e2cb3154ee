package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.admin.JobState;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A plain job's completion moves it into pgbus.job_history in the same statement (issue #27): every
 * reader finds it at once, the lease fence holds, and whatever runs beside it (the archive's moves,
 * the previous release's UPDATE, a rescue and a replay) it is in one table, never in both, never in
 * neither.
 */
class CompleteIntoHistoryTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach(
              "pgbus.job", "pgbus.job_history", "pgbus.batch", "pgbus.job_dependency");

  private final JobStore store = new JobStore(JobStore.ERRORS_KEPT, true);
  private final JobStore previous = new JobStore(); // completes with the UPDATE, as 0.1.0 does
  private final ArchiveStore archive = new ArchiveStore();
  private final JobAdminStore admin = new JobAdminStore();
  private final Jobs jobs = new Jobs("into-history-test", 1 << 20, JobTracing.NONE);

  @BeforeEach
  void todaysPartition() throws SQLException {
    try (Connection c = db.connect()) {
      LocalDate today = LocalDate.now(ZoneOffset.UTC);
      for (LocalDate d = today.minusDays(1); !d.isAfter(today.plusDays(1)); d = d.plusDays(1)) {
        assertThat(archive.create(c, d)).isTrue();
      }
    }
  }

  @Test
  void aCompletedJobIsInTheHistoryAtOnceAndEveryReaderFindsIt() throws Exception {
    long id = enqueue("ih");
    long before = counted("ih");
    long appended = db.queryLong("SELECT count(*) FROM pgbus.job_history_count_delta");
    try (Connection c = db.connect()) {
      assertThat(store.jobCompleteWithResult(c, claimOne(c, "ih", id), "{\"answer\":42}")).isTrue();
    }

    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ?", id)).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history_default")).isZero();
    assertThat(
            db.queryText(
                "SELECT state || ' ' || (lease_expires_at IS NULL) || ' '"
                    + " || (finalized_at >= attempted_at) FROM pgbus.job_history WHERE id = ?",
                id))
        .isEqualTo("completed true true");
    try (Connection c = db.connect()) {
      var view = admin.jobView(c, id).orElseThrow();
      assertThat(view.state()).isEqualTo(JobState.COMPLETED);
      assertThat(view.result()).isEqualTo("{\"answer\": 42}");
      assertThat(view.attempt()).isEqualTo(1);
    }
    assertThat(counted("ih")).as("the history's count (V47)").isEqualTo(before + 1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history_count_delta"))
        .as("appended, not upserted (V59)")
        .isEqualTo(appended + 1);

    try (Connection c = db.connect()) {
      archive.archive(c, Duration.ofDays(3), 10);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history_count_delta"))
        .as("folded by the leader's round")
        .isZero();
    assertThat(counted("ih")).isEqualTo(before + 1);
  }

  @Test
  void severalJobsOfOneTransactionMoveInOneStatementAndAStaleOneStays() throws Exception {
    for (int i = 0; i < 3; i++) {
      enqueue("ih_many");
    }
    try (Connection c = db.connect()) {
      List<ClaimedJob> held = store.jobClaim(c, List.of("ih_many"), 3, "w", Duration.ofMinutes(1));
      ClaimedJob stale = ClaimedJobs.nextAttempt(held.get(2));

      assertThat(store.jobCompleteMany(c, List.of(held.get(0), held.get(1), stale))).isEqualTo(2);
      assertThat(store.jobComplete(c, stale)).isFalse();
      assertThat(db.queryLongs("SELECT id FROM pgbus.job_history ORDER BY id"))
          .containsExactly(held.get(0).id(), held.get(1).id());
      assertThat(db.job(held.get(2).id()).state()).isEqualTo("running");
    }
  }

  @Test
  void withoutTodaysPartitionOrForABatchMemberTheJobIsCompletedInPlace() throws Exception {
    long member;
    try (Connection c = db.connect()) {
      member =
          jobs.enqueueBatch(
                  c,
                  List.of(new NewJob("ih_b", "{}", EnqueueOptions.defaults())),
                  new NewJob("ih_bdone", "{}", EnqueueOptions.defaults()))
              .jobIds()
              .get(0);
      assertThat(store.jobComplete(c, claimOne(c, "ih_b", member))).isTrue();
    }
    assertThat(db.job(member).state())
        .as("a linked job stays for its batch")
        .isEqualTo("completed");

    db.update("DROP TABLE pgbus." + ArchiveStore.name(LocalDate.now(ZoneOffset.UTC)));
    long plain = enqueue("ih_np");
    try (Connection c = db.connect()) {
      assertThat(store.jobComplete(c, claimOne(c, "ih_np", plain))).isTrue();
    }
    assertThat(db.job(plain).state()).isEqualTo("completed");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history_default"))
        .as("never into the default partition")
        .isZero();
  }

  @Test
  void aCompletionRacingTheArchiveTheOldReleaseARescueAndAReplayLeavesEachJobInOnePlace()
      throws Exception {
    int n = 400;
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(enqueue("ih_race"));
    }
    var stop = new AtomicBoolean();
    var replays = new AtomicLong();
    // The archive moves whatever the previous release completed, as soon as it can.
    CompletableFuture<Long> archived =
        CompletableFuture.supplyAsync(
            () -> {
              long moved = 0;
              try (Connection c = db.connect()) {
                while (!stop.get()) {
                  moved +=
                      archive.move(
                          c,
                          Instant.now().minus(Duration.ofDays(1)),
                          Instant.now().plusSeconds(60),
                          7);
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
              return moved;
            });
    // A rescue makes running jobs dead and an operator replays them, while their old attempts
    // still try to complete.
    CompletableFuture<Void> replayed =
        CompletableFuture.runAsync(
            () -> {
              try (Connection c = db.connect()) {
                while (!stop.get()) {
                  List<Long> dead =
                      db.queryLongs(
                          "UPDATE pgbus.job SET state = 'dead', finalized_at = now(),"
                              + " lease_expires_at = NULL WHERE id IN (SELECT id FROM pgbus.job"
                              + " WHERE state = 'running' ORDER BY random() LIMIT 3"
                              + " FOR UPDATE SKIP LOCKED) RETURNING id");
                  for (long id : dead) {
                    if (jobs.replay(c, id)) {
                      replays.incrementAndGet();
                    }
                  }
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    List<CompletableFuture<Integer>> workers = new ArrayList<>();
    for (int w = 0; w < 4; w++) {
      JobStore completing = w % 2 == 0 ? store : previous;
      boolean waitsForAReplay = w == 0;
      workers.add(
          CompletableFuture.supplyAsync(
              () -> {
                int done = 0;
                try (Connection c = db.connect()) {
                  while (true) {
                    List<ClaimedJob> held =
                        completing.jobClaim(c, List.of("ih_race"), 4, "w", Duration.ofMinutes(1));
                    if (held.isEmpty()) {
                      if (db.queryLong(
                              "SELECT count(*) FROM pgbus.job WHERE queue = 'ih_race'"
                                  + " AND state <> 'completed'")
                          == 0) {
                        return done;
                      }
                      Thread.onSpinWait();
                      continue;
                    }
                    if (waitsForAReplay && replays.get() == 0) {
                      // Its first jobs stay running until the rescue took one and the replay
                      // revived it: this attempt's completion must then find nothing.
                      Await.until("a replay", Duration.ofSeconds(30), () -> replays.get() > 0);
                    }
                    c.setAutoCommit(false);
                    done +=
                        held.size() == 1
                            ? (completing.jobComplete(c, held.get(0)) ? 1 : 0)
                            : completing.jobCompleteMany(c, held);
                    c.commit();
                    c.setAutoCommit(true);
                  }
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              }));
    }
    int completed = 0;
    for (var w : workers) {
      completed += w.get();
    }
    stop.set(true);
    archived.get();
    replayed.get();

    assertThat(completed).as("each job completed once, by its last attempt").isEqualTo(n);
    assertThat(db.queryLongs("SELECT id FROM pgbus.job_all WHERE queue = 'ih_race' ORDER BY id"))
        .as("every job in exactly one table")
        .containsExactlyElementsOf(ids);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_all WHERE queue = 'ih_race'"
                    + " AND state <> 'completed'"))
        .isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job j JOIN pgbus.job_history h USING (id)"))
        .isZero();
    assertThat(replays.get()).as("the race had replays to race").isPositive();
    try (Connection c = db.connect()) {
      archive.archive(c, Duration.ofDays(3), 10);
    }
    assertThat(counted("ih_race"))
        .as("the history's count, folded")
        .isEqualTo(db.queryLong("SELECT count(*) FROM pgbus.job_history WHERE queue = 'ih_race'"));
  }

  private long counted(String queue) {
    return db.queryLong(
        "SELECT coalesce(sum(jobs), 0)::bigint FROM (SELECT queue, state, jobs"
            + " FROM pgbus.job_history_count UNION ALL SELECT queue, state, jobs"
            + " FROM pgbus.job_history_count_delta) c WHERE queue = ? AND state = 'completed'",
        queue);
  }

  private long enqueue(String queue) throws SQLException {
    try (Connection c = db.connect()) {
      return jobs.enqueue(c, new NewJob(queue, "{}", EnqueueOptions.defaults()));
    }
  }

  private ClaimedJob claimOne(Connection c, String queue, long id) throws SQLException {
    List<ClaimedJob> claimed = store.jobClaim(c, List.of(queue), 1, "w", Duration.ofMinutes(1));
    assertThat(claimed).extracting(ClaimedJob::id).containsExactly(id);
    return claimed.get(0);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Retention never deletes a job that a concurrent transaction revives: a prune that meets a dead
 * job while a replay holds it leaves the job alone, and the replay wins.
 */
class RetentionRaceTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  private static final Duration DEAD_RETENTION = Duration.ofHours(1);

  private final JobStore store = new JobStore();

  @Test
  void aPruneDuringAReplayLeavesTheRevivedJobAvailable() throws Exception {
    long id = oldDeadJob();
    try (Connection replay = db.connect();
        Connection prune = db.connect()) {
      int prunePid = backendPid(prune);
      replay.setAutoCommit(false);
      assertThat(store.jobReplayDead(replay, id, null)).isTrue();

      CompletableFuture<Integer> pruned = CompletableFuture.supplyAsync(() -> prune(prune));
      // Either the prune passes the held row at once (SKIP LOCKED), or it waits on the replay's
      // row lock: only then is committing the replay the race that lost jobs.
      Await.until(
          "the prune to finish or to wait on the replay's row lock",
          Duration.ofSeconds(10),
          () -> pruned.isDone() || waitsOnALock(prunePid));
      replay.commit();

      assertThat(pruned.get()).as("jobs pruned").isZero();
    }
    assertThat(db.queryLongs("SELECT id FROM pgbus.job")).as("jobs left").containsExactly(id);
    assertThat(db.job(id).state()).isEqualTo("available");
  }

  @Test
  void aPruneDeletesOldDeadJobsThatNobodyHolds() throws Exception {
    oldDeadJob();
    long held = oldDeadJob();
    try (Connection holder = db.connect()) {
      holder.setAutoCommit(false);
      try (PreparedStatement ps =
          holder.prepareStatement("SELECT 1 FROM pgbus.job WHERE id = ? FOR UPDATE")) {
        ps.setLong(1, held);
        ps.executeQuery().close();
      }
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        st.execute("SET lock_timeout = '5s'"); // a prune that waits on the held row fails here
        assertThat(store.jobPrune(c, "dead", DEAD_RETENTION, 10)).isEqualTo(1);
      }
      holder.rollback();
    }
    assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(held);
    try (Connection c = db.connect()) {
      assertThat(store.jobPrune(c, "dead", DEAD_RETENTION, 10)).isEqualTo(1);
    }
    assertThat(db.jobCount()).isZero();
  }

  /** A job that failed its only attempt a day ago: due for pruning with a 1-hour retention. */
  private long oldDeadJob() throws SQLException {
    try (Connection c = db.connect()) {
      long id =
          store.jobInsert(
              c, new NewJob("race", "{}", EnqueueOptions.defaults().withMaxAttempts(1)));
      List<ClaimedJob> claimed = store.jobClaim(c, List.of("race"), 1, "w", Duration.ofMinutes(1));
      assertThat(store.jobFail(c, claimed.get(0), "boom", Duration.ZERO).dead()).isTrue();
      db.update("UPDATE pgbus.job SET finalized_at = now() - interval '1 day' WHERE id = ?", id);
      return id;
    }
  }

  private int prune(Connection c) {
    try {
      return store.jobPrune(c, "dead", DEAD_RETENTION, 100);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int backendPid(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_backend_pid()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static boolean waitsOnALock(int pid) {
    return db.queryLong(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'", pid)
        == 1;
  }
}

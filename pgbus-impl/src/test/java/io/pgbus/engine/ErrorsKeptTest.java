package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow.JobError;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bound on a job's errors is the store's, on every path that records one (a failure, a cancel
 * from the handler, a rescue), and pgbus.claim_jobs keeps the same {@link JobStore#ERRORS_KEPT}.
 */
class ErrorsKeptTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  private static final String QUEUE = "errors_kept";
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aStoreKeepsOnlyItsBoundOfNewestErrorsOnFailCancelAndRescue() throws SQLException {
    JobStore store = new JobStore(3);
    long id = jobs.enqueue(QUEUE, EnqueueOptions.defaults().withMaxAttempts(20));
    try (Connection c = db.connect()) {
      for (int i = 0; i < 4; i++) {
        store.jobFail(c, claim(store, c, Duration.ofMinutes(1)), "boom " + i, Duration.ZERO);
      }
      assertThat(db.job(id).errors()).extracting(JobError::attempt).containsExactly(4, 3, 2);

      ClaimedJob held = claim(store, c, Duration.ofMillis(1));
      db.update("UPDATE pgbus.job SET lease_expires_at = now() - interval '1 second'");
      assertThat(store.jobRescueExpired(c, 10)).containsEntry(QUEUE, 1L);
      assertThat(db.job(id).errors()).extracting(JobError::attempt).containsExactly(5, 4, 3);
      assertThat(db.job(id).errors().get(0).error()).startsWith("lease expired: worker w1");
      assertThat(held.attempt()).isEqualTo(5);

      db.update("UPDATE pgbus.job SET run_at = now()");
      store.jobCancelRunning(c, claim(store, c, Duration.ofMinutes(1)), "enough");
      assertThat(db.job(id).errors()).extracting(JobError::attempt).containsExactly(6, 5, 4);
      assertThat(db.job(id).errors().get(0).error()).isEqualTo("cancelled: enough");
    }
  }

  @Test
  void theDefaultStoreKeepsErrorsKept() throws SQLException {
    JobStore store = new JobStore();
    long id = jobs.enqueue(QUEUE, EnqueueOptions.defaults().withMaxAttempts(20));
    try (Connection c = db.connect()) {
      for (int i = 0; i < JobStore.ERRORS_KEPT + 2; i++) {
        store.jobFail(c, claim(store, c, Duration.ofMinutes(1)), "boom " + i, Duration.ZERO);
      }
    }
    assertThat(db.job(id).errors()).hasSize(JobStore.ERRORS_KEPT);
    assertThat(db.job(id).errors().get(0).attempt()).isEqualTo(JobStore.ERRORS_KEPT + 2);
  }

  @Test
  void theClaimFunctionKeepsAsManyErrorsAsTheStore() throws SQLException {
    String path = "'$[0 to " + (JobStore.ERRORS_KEPT - 1) + "]'";
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pg_catalog.pg_get_functiondef(p.oid) FROM pg_catalog.pg_proc p"
                    + " WHERE p.pronamespace = 'pgbus'::regnamespace AND p.proname = 'claim_jobs'");
        ResultSet rs = ps.executeQuery()) {
      int functions = 0;
      while (rs.next()) {
        functions++;
        assertThat(rs.getString(1)).contains("jsonb_path_query_array").contains(path);
      }
      assertThat(functions).isPositive();
    }
  }

  private static ClaimedJob claim(JobStore store, Connection c, Duration lease)
      throws SQLException {
    List<ClaimedJob> claimed = store.jobClaim(c, List.of(QUEUE), 1, "w1", lease);
    assertThat(claimed).hasSize(1);
    return claimed.get(0);
  }
}

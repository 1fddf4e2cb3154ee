package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobState;
import io.pgbus.admin.QueueStats;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The queue list's live counts (issue #27): exact where the statistics put a (queue, state) pair at
 * most at the cap, the planner's estimate (labelled) past it, and never more than cap + 1 index
 * entries read per pair, whatever the size of the pair or the state of the visibility map. The work
 * is read from the transaction's own statistics ({@code pg_stat_xact_user_indexes}), not timed.
 */
class QueueCountsTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private final JobAdminStore admin = new JobAdminStore();
  private final ArchiveStore archive = new ArchiveStore();

  @BeforeEach
  void clean() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.job_history");
  }

  private static void jobs(String queue, String state, int n) {
    db.update(
        """
        INSERT INTO pgbus.job (queue, state, payload, finalized_at)
        SELECT ?, ?::pgbus.job_state, '{}',
               CASE WHEN ? IN ('completed', 'dead', 'cancelled') THEN now() END
          FROM generate_series(1, ?) g
        """,
        queue,
        state,
        state,
        n);
  }

  /** The queue list as one transaction sees it, and the index entries that transaction read. */
  private record Read(Map<String, QueueStats> stats, long entriesRead) {}

  private Read read() throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      try {
        var stats = new TreeMap<String, QueueStats>();
        for (QueueStats s : admin.queueStats(c, List.of(), JobAdmin.COUNT_CAP)) {
          stats.put(s.queue(), s);
        }
        try (Statement st = c.createStatement();
            ResultSet rs =
                st.executeQuery(
                    // The index's idx_tup_read, this transaction's part (no pg_stat_xact_ view
                    // of indexes exists): counted as each entry is returned, heap fetch or not.
                    "SELECT pg_catalog.pg_stat_get_xact_tuples_returned("
                        + "'pgbus.job_queue_state_idx'::pg_catalog.regclass)")) {
          assertThat(rs.next()).isTrue();
          return new Read(stats, rs.getLong(1));
        }
      } finally {
        c.rollback();
      }
    }
  }

  @Test
  void smallPairsAreCountedExactlyAndALargeOneIsEstimatedWithoutReadingIt() throws SQLException {
    jobs("big", "dead", 200_000);
    jobs("big", "available", 300);
    jobs("small", "retryable", 600);
    jobs("small", "scheduled", 2);
    db.update("VACUUM ANALYZE pgbus.job");

    Read r = read();

    QueueStats big = r.stats().get("big");
    assertThat(big.estimated()).containsExactly(JobState.DEAD);
    assertThat(big.counts().get(JobState.DEAD)).isCloseTo(200_000L, within(20_000L));
    assertThat(big.counts().get(JobState.AVAILABLE)).isEqualTo(300);
    assertThat(big.counts().get(JobState.RUNNING)).isZero();
    assertThat(big.capped()).isEmpty();
    QueueStats small = r.stats().get("small");
    assertThat(small.estimated()).isEmpty();
    assertThat(small.capped()).isEmpty();
    assertThat(small.counts().get(JobState.RETRYABLE)).isEqualTo(600);
    assertThat(small.counts().get(JobState.SCHEDULED)).isEqualTo(2);
    assertThat(r.entriesRead())
        .as("index entries read for 200,902 jobs: the small pairs' 902 and the queues' probes")
        .isLessThan(2 * (JobAdmin.COUNT_CAP + 1));

    // Every tenth job changed since the last vacuum: a count would fetch the heap for nearly every
    // entry (1.5 s for 250,000 in the bench before). The large pair is still not read.
    db.update("UPDATE pgbus.job SET priority = priority WHERE id % 10 = 3");
    Read stale = read();
    assertThat(stale.stats().get("big").estimated()).containsExactly(JobState.DEAD);
    assertThat(stale.stats().get("small").counts().get(JobState.RETRYABLE)).isEqualTo(600);
    assertThat(stale.entriesRead()).isLessThan(2 * (JobAdmin.COUNT_CAP + 1));
  }

  @Test
  void aPairTheStatisticsHadSmallStopsOnePastTheCapAndIsALowerBound() throws SQLException {
    jobs("other", "dead", 100_000);
    jobs("burst", "available", 5);
    db.update("VACUUM ANALYZE pgbus.job");
    jobs("burst", "available", 5_000); // since the last ANALYZE: the statistics say 5

    Read r = read();

    QueueStats burst = r.stats().get("burst");
    assertThat(burst.estimated()).isEmpty();
    assertThat(burst.capped()).containsExactly(JobState.AVAILABLE);
    assertThat(burst.counts().get(JobState.AVAILABLE)).isEqualTo(JobAdmin.COUNT_CAP);
    assertThat(r.entriesRead()).isLessThan(2 * (JobAdmin.COUNT_CAP + 1));
  }

  @Test
  void eachQueueKeepsItsOwnStatesInTheEstimates() throws SQLException {
    // Without V58's statistics of the pairs the planner multiplies the queue's share by the
    // state's: 10,000 waiting jobs in a queue that has only dead ones, shown as an estimate.
    jobs("a", "dead", 20_000);
    jobs("b", "available", 20_000);
    db.update("VACUUM ANALYZE pgbus.job");

    Read r = read();

    QueueStats a = r.stats().get("a");
    assertThat(a.estimated()).containsExactly(JobState.DEAD);
    assertThat(a.counts().get(JobState.DEAD)).isCloseTo(20_000L, within(2_000L));
    assertThat(a.counts().get(JobState.AVAILABLE)).isZero();
    QueueStats b = r.stats().get("b");
    assertThat(b.estimated()).containsExactly(JobState.AVAILABLE);
    assertThat(b.counts().get(JobState.DEAD)).isZero();
  }

  @Test
  void theHistoryStaysExactNextToAnEstimatedLivePart() throws SQLException {
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    try (Connection c = db.connect()) {
      // Today's day partition, counted from its start (V47), as the leader's archive has it.
      archive.create(c, today);
      archive.recount(c, ArchiveStore.name(today));
    }
    jobs("h", "completed", 3_000);
    db.update(
        """
        WITH moved AS (DELETE FROM pgbus.job RETURNING *)
        INSERT INTO pgbus.job_history SELECT * FROM moved
        """);
    jobs("h", "completed", 5_000); // within the minute before the archive moves them
    jobs("h", "cancelled", 7);
    db.update("VACUUM ANALYZE pgbus.job");

    QueueStats h = read().stats().get("h");

    assertThat(h.estimated()).containsExactly(JobState.COMPLETED);
    assertThat(h.capped()).isEmpty();
    assertThat(h.counts().get(JobState.COMPLETED)).isCloseTo(8_000L, within(500L));
    assertThat(h.counts().get(JobState.CANCELLED)).isEqualTo(7);
  }
}

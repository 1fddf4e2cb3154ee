package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The claim in parts (docs/schema.md, "The claim in parts"; issue #24): {@code pgbus.claim} asks a
 * helper for a decision only where that decision applies, since none of them can be inlined. The
 * plain path, a queue without a limit row claimed without floors, calls none; a limited queue asks
 * {@code claim_budget} once per visit and {@code claim_keyed} per level; floors go through {@code
 * claim_next_level}. Counted per transaction with {@code track_functions}, beside what was claimed.
 */
class ClaimPartsTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_limit");

  private static final Duration LEASE = Duration.ofMinutes(5);
  private static final List<String> HELPERS =
      List.of("claim_budget", "claim_next_level", "claim_keyed");

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void thePlainPathCallsNoHelper() throws Exception {
    long first = jobs.enqueue("plain");
    long second = jobs.enqueue("plain");

    Counted counted = claimCounting(List.of("plain"), null);

    assertThat(counted.claimed()).containsExactly(first, second);
    assertThat(counted.calls()).containsEntry("claim_jobs", 1L).doesNotContainKeys(helpers());
  }

  @Test
  void aKeyedQueueAsksItsBudgetOnceAndItsKeyedCandidatesPerLevel() throws Exception {
    long a = jobs.enqueue("keyed", EnqueueOptions.defaults().withConcurrencyKey("a"));
    jobs.enqueue("keyed", EnqueueOptions.defaults().withConcurrencyKey("a"));
    long b = jobs.enqueue("keyed", EnqueueOptions.defaults().withConcurrencyKey("b"));
    long urgent =
        jobs.enqueue("keyed", EnqueueOptions.defaults().withConcurrencyKey("c").withPriority(-1));

    Counted counted = claimCounting(List.of("keyed"), null);

    // A key is a mutex (limit 1): the second job of "a" waits.
    assertThat(counted.claimed()).containsExactly(urgent, a, b);
    assertThat(counted.calls())
        .containsEntry("claim_budget", 1L)
        .containsEntry("claim_keyed", 2L)
        .doesNotContainKey("claim_next_level");
  }

  @Test
  void floorsAreTheNextLevelHelpersAlone() throws Exception {
    Instant now = Instant.now();
    jobs.enqueue("floored", EnqueueOptions.defaults().withRunAt(now.minusSeconds(60)));
    long visible =
        jobs.enqueue("floored", EnqueueOptions.defaults().withRunAt(now.minusSeconds(5)));
    var floors =
        new ClaimFloors.Floors(List.of("floored"), List.of(0), List.of(now.minusSeconds(30)));

    Counted counted = claimCounting(List.of("floored"), floors);

    assertThat(counted.claimed()).containsExactly(visible);
    // Level 0 from its floor, then the search for a level above it that finds none.
    assertThat(counted.calls())
        .containsEntry("claim_next_level", 2L)
        .doesNotContainKeys("claim_budget", "claim_keyed");
  }

  /** What one claim of up to 10 jobs took, and the calls of pgbus functions it made. */
  private record Counted(List<Long> claimed, Map<String, Long> calls) {}

  private Counted claimCounting(List<String> queues, ClaimFloors.Floors floors)
      throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET LOCAL track_functions = 'all'");
      }
      List<Long> claimed =
          store.jobClaimInLanes(c, queues, 10, 10, "w", LEASE, floors).stream()
              .flatMap(List::stream)
              .map(ClaimedJob::id)
              .toList();
      var calls = new TreeMap<String, Long>();
      // This transaction's calls so far, which the statistics views hold until it ends.
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT f.funcname::text, f.calls FROM pg_catalog.pg_stat_xact_user_functions f"
                      + " WHERE f.schemaname OPERATOR(pg_catalog.=) 'pgbus'::name");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          calls.merge(rs.getString(1), rs.getLong(2), Long::sum);
        }
      }
      c.commit();
      return new Counted(claimed, calls);
    }
  }

  private static String[] helpers() {
    return HELPERS.toArray(String[]::new);
  }
}

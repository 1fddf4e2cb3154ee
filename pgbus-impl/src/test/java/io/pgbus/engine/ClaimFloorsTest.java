package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.AutoExplain;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.TestDatabase;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Claim floors (docs/schema.md, "Claim floors"; issue #15, "a long transaction elsewhere"): a claim
 * given a floor for a (queue, priority level) starts that level's index range at the floor, and so
 * does not step over the entries that a snapshot held elsewhere keeps vacuum from removing. The
 * order contract holds between the jobs a floored claim can see; a claim without floors sees every
 * job; and the capsule's bookkeeping engages floors only while claims are slow, with a claim
 * without floors at least every {@link ClaimFloors#FULL_CLAIM_EVERY}.
 */
class ClaimFloorsTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_limit");

  private static final Duration LEASE = Duration.ofMinutes(5);

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aFlooredClaimStartsTheLevelAtItsFloorAndAClaimWithoutFloorsTakesWhatItHid()
      throws Exception {
    Instant now = Instant.now();
    long behind = jobs.enqueue("q", EnqueueOptions.defaults().withRunAt(now.minusSeconds(60)));
    long after = jobs.enqueue("q", EnqueueOptions.defaults().withRunAt(now.minusSeconds(5)));

    assertThat(claim(List.of("q"), 10, floors("q", 0, now.minusSeconds(30))))
        .containsExactly(after);
    assertThat(claim(List.of("q"), 10, null)).containsExactly(behind);
  }

  @Test
  void strictPriorityHoldsAcrossLevelsWithAndWithoutFloors() throws Exception {
    Instant now = Instant.now();
    Instant floor = now.minusSeconds(30);
    // Level 0 has a floor; -5 and 7 have none; 3 has one it is empty from.
    long p0Hidden = jobs.enqueue("q", opts(0, now.minusSeconds(60)));
    long p0 = jobs.enqueue("q", opts(0, now.minusSeconds(10)));
    long pMinus5Old = jobs.enqueue("q", opts(-5, now.minusSeconds(3600)));
    long p3Hidden = jobs.enqueue("q", opts(3, now.minusSeconds(60)));
    long p7Old = jobs.enqueue("q", opts(7, now.minusSeconds(3600)));
    long p7 = jobs.enqueue("q", opts(7, now.minusSeconds(1)));

    var f =
        new ClaimFloors.Floors(
            List.of("q", "q"), List.of(0, 3), List.of(floor, now.minusSeconds(20)));
    assertThat(claim(List.of("q"), 2, f)).containsExactly(pMinus5Old, p0);
    assertThat(claim(List.of("q"), 10, f)).containsExactly(p7Old, p7);
    assertThat(claim(List.of("q"), 10, f)).isEmpty();
    assertThat(claim(List.of("q"), 10, null)).containsExactly(p0Hidden, p3Hidden);
  }

  @Test
  void floorsOfOneQueueLeaveTheOtherQueuesAndTheQueueOrderAlone() throws Exception {
    Instant now = Instant.now();
    long aHidden = jobs.enqueue("a", opts(0, now.minusSeconds(60)));
    long bOld = jobs.enqueue("b", opts(0, now.minusSeconds(60)));
    long a = jobs.enqueue("a", opts(0, now.minusSeconds(1)));

    assertThat(claim(List.of("a", "b"), 10, floors("a", 0, now.minusSeconds(30))))
        .containsExactly(a, bOld);
    assertThat(claim(List.of("a", "b"), 10, null)).containsExactly(aHidden);
  }

  @Test
  void aLimitedQueueIgnoresFloors() throws Exception {
    Instant now = Instant.now();
    db.queryLong("SELECT count(*) FROM pgbus.queue_limit_set('lim', 100)");
    long old = jobs.enqueue("lim", opts(0, now.minusSeconds(60)));

    assertThat(claim(List.of("lim"), 10, floors("lim", 0, now.minusSeconds(30))))
        .containsExactly(old);
  }

  @Test
  void floorArraysOfDifferentLengthsOrOverTheLimitAreRefusedWithTheirBound() {
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT count(*) FROM pgbus.claim(ARRAY['q'], 1, 'w', interval '1 minute',"
                        + " NULL, ARRAY['q'], ARRAY[0, 1], ARRAY[now()])"))
        .rootCause()
        .hasMessageContaining("of one length, not 1, 2 and 1")
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo("22023");
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT count(*) FROM pgbus.claim(ARRAY['q'], 1, 'w', interval '1 minute',"
                        + " NULL, array_fill('q'::text, ARRAY[201001]),"
                        + " array_fill(0, ARRAY[201001]), array_fill(now(), ARRAY[201001]))"))
        .rootCause()
        .hasMessageContaining("201001 claim floors are over the limit of 201000")
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo("54000");
  }

  /**
   * The case floors exist for, counted in buffers rather than timed: while another session holds a
   * REPEATABLE READ snapshot, 20,000 jobs are claimed and completed; their entries stay in
   * job_claim_idx, and the next claim without floors visits every one of them (and its heap row). A
   * floored claim of the same queue reads a few pages.
   */
  @Test
  void underAHeldSnapshotAFlooredClaimReadsAFewPagesWhereAFullClaimReadsEveryClaimedJob()
      throws Exception {
    Instant now = Instant.now();
    try (Connection holder = db.connect()) {
      holder.setAutoCommit(false);
      try (Statement st = holder.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        st.execute("SELECT count(*) FROM pgbus.job");
      }
      for (int i = 0; i < 2; i++) { // the batch limit is 10,000 jobs
        db.queryLong(
            "SELECT count(*) FROM pgbus.enqueue_many(array_fill('held'::text, ARRAY[10000]),"
                + " array_fill('{}'::jsonb, ARRAY[10000]),"
                + " array_fill(now() - interval '1 minute', ARRAY[10000]),"
                + " array_fill(0, ARRAY[10000]), array_fill(25, ARRAY[10000]))");
      }
      int taken = 0;
      for (int i = 0; i < 20; i++) {
        taken += claim(List.of("held"), 1000, null).size();
      }
      assertThat(taken).isEqualTo(20_000);
      db.update(
          "UPDATE pgbus.job SET state = 'completed', finalized_at = now() WHERE queue = 'held'");
      db.update("VACUUM pgbus.job"); // removes nothing the held snapshot might still see
      long first = jobs.enqueue("held", opts(0, now));
      long second = jobs.enqueue("held", opts(0, now));

      List<Long> claimed = new ArrayList<>();
      long full = claimBuffers(null, claimed);
      long floored = claimBuffers(floors("held", 0, now.minusSeconds(2)), claimed);

      assertThat(claimed).containsExactly(first, second);
      Measurements.record("claim under a held snapshot, 20,000 claimed since: buffers, full", full);
      Measurements.record(
          "claim under a held snapshot, 20,000 claimed since: buffers, floored", floored);
      assertThat(full).as("pages a claim without floors reads").isGreaterThan(500);
      assertThat(floored).as("pages a floored claim reads").isLessThan(full / 10);
      holder.rollback();
    }
  }

  /**
   * The other statement a held snapshot slowed down, once claims were floored: the completion. With
   * few running jobs in the statistics, {@code state = 'running'} let the planner choose
   * job_lease_idx (partial, state = 'running', estimated one row) and filter it by id, walking
   * every running version the snapshot keeps. The fence is written so that only the primary key
   * serves.
   */
  @Test
  void aCompletionReachesItsJobByPrimaryKeyWhateverTheStatisticsSay() throws Exception {
    db.queryLong(
        "SELECT count(*) FROM pgbus.enqueue_many(array_fill('done'::text, ARRAY[5000]),"
            + " array_fill('{}'::jsonb, ARRAY[5000]), array_fill(now(), ARRAY[5000]),"
            + " array_fill(0, ARRAY[5000]), array_fill(25, ARRAY[5000]))");
    // Statistics taken while no job runs (as autovacuum often finds them), then one starts.
    db.update(
        "UPDATE pgbus.job SET state = 'completed', attempt = 1, finalized_at = now()"
            + " WHERE queue = 'done'");
    db.update("VACUUM ANALYZE pgbus.job");
    long running = db.queryLong("SELECT min(id) + 1000 FROM pgbus.job");
    db.update(
        "UPDATE pgbus.job SET state = 'running', lease_expires_at = now() + interval '5 minutes',"
            + " finalized_at = NULL WHERE id = ?",
        running);
    assertThat(explain(JobStore.COMPLETE.replace("state::pg_catalog.text", "state"), running, 1))
        .as("the trap, with the fence as it was")
        .contains("job_lease_idx");

    String single = explain(JobStore.COMPLETE, running, 1);
    String many =
        explain(
            JobStore.COMPLETE_MANY
                .replace("?::bigint[]", "ARRAY[" + running + "]::bigint[]")
                .replace("?::int[]", "ARRAY[1]::int[]"));

    assertThat(single).contains("job_pkey").doesNotContain("job_lease_idx");
    assertThat(many).contains("job_pkey").doesNotContain("job_lease_idx");
  }

  private static String explain(String sql, Object... args) throws SQLException {
    try (Connection c = db.connect();
        var ps = c.prepareStatement("EXPLAIN " + sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      var plan = new StringBuilder();
      try (var rs = ps.executeQuery()) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
      return plan.toString();
    }
  }

  @Test
  void floorsEngageOnlyAfterASlowFullClaimAndMoveOnlyForward() {
    AtomicLong clock = new AtomicLong();
    var floors = new ClaimFloors("c", clock::get);
    Instant t = Instant.parse("2026-12-01T10:00:00Z");

    assertThat(floors.next()).isNull();
    floors.claimed(null, List.of(job("q", 0, t)), millis(1));
    assertThat(floors.engaged()).isFalse();
    assertThat(floors.next()).as("fast claims use no floors").isNull();

    floors.claimed(null, List.of(job("q", 0, t.minusSeconds(30))), millis(60));
    floors.claimed(null, List.of(), millis(60));
    assertThat(floors.engaged()).as("two slow full claims in a row").isFalse();
    floors.claimed(null, List.of(), millis(1));
    floors.claimed(null, List.of(), millis(60));
    floors.claimed(null, List.of(), millis(60));
    assertThat(floors.engaged()).as("a fast one between: the count starts again").isFalse();
    floors.claimed(null, List.of(job("q", 0, t.plusSeconds(5)), job("q", 0, t)), millis(60));
    assertThat(floors.engaged()).as("three in a row").isTrue();
    assertThat(floors.next()).isEqualTo(floors("q", 0, t.minus(ClaimFloors.GRACE)));

    var used = floors.next();
    floors.claimed(used, List.of(job("q", 0, t.minusSeconds(60)), job("r", 2, t)), millis(1));
    assertThat(floors.next().runAts())
        .as("a floor only moves forward")
        .contains(t.minus(ClaimFloors.GRACE));
    assertThat(floors.next().queues()).containsExactlyInAnyOrder("q", "r");

    clock.addAndGet(ClaimFloors.FULL_CLAIM_EVERY.toNanos());
    assertThat(floors.next()).as("a full claim every FULL_CLAIM_EVERY").isNull();
    floors.claimed(null, List.of(), millis(60));
    assertThat(floors.next()).as("still slow: floors kept").isNotNull();

    floors.reset();
    assertThat(floors.next()).as("after a hand-back").isNull();
    floors.claimed(null, List.of(job("q", 0, t)), millis(2));
    assertThat(floors.engaged()).as("a fast full claim disengages").isFalse();
    assertThat(floors.next()).isNull();
  }

  private static long millis(long ms) {
    return Duration.ofMillis(ms).toNanos();
  }

  private static ClaimedJob job(String queue, int priority, Instant runAt) {
    return new ClaimedJob(1, queue, priority, "{}", 1, 25, runAt, runAt, null, 0);
  }

  private static EnqueueOptions opts(int priority, Instant runAt) {
    return EnqueueOptions.defaults().withPriority(priority).withRunAt(runAt);
  }

  private static ClaimFloors.Floors floors(String queue, int priority, Instant floor) {
    return new ClaimFloors.Floors(List.of(queue), List.of(priority), List.of(floor));
  }

  private List<Long> claim(List<String> queues, int max, ClaimFloors.Floors floors)
      throws SQLException {
    try (Connection c = db.connect()) {
      return store.jobClaimInLanes(c, queues, max, max, "w", LEASE, floors).stream()
          .flatMap(List::stream)
          .map(ClaimedJob::id)
          .toList();
    }
  }

  /** Claims one job of "held"; returns the shared buffers its statements over pgbus.job read. */
  private long claimBuffers(ClaimFloors.Floors floors, List<Long> claimed) throws SQLException {
    try (Connection c = db.connect()) {
      AutoExplain.on(c);
      // pgbus.claim itself, as JobStore calls it: the plans arrive as warnings of the statement.
      try (var ps =
          c.prepareStatement(
              "SELECT id FROM pgbus.claim(ARRAY['held'], 1, 'w', interval '5 minutes', 1,"
                  + " ?::text[], ?::integer[], ?::timestamptz[])")) {
        ps.setArray(1, floors == null ? null : c.createArrayOf("text", floors.queues().toArray()));
        ps.setArray(
            2, floors == null ? null : c.createArrayOf("int4", floors.priorities().toArray()));
        ps.setArray(
            3,
            floors == null
                ? null
                : c.createArrayOf(
                    "text", floors.runAts().stream().map(Instant::toString).toArray()));
        try (var rs = ps.executeQuery()) {
          while (rs.next()) {
            claimed.add(rs.getLong(1));
          }
        }
        return buffers(ps.getWarnings());
      }
    }
  }

  /** The shared buffers read by the plans of statements over pgbus.job among these warnings. */
  private static long buffers(SQLWarning warnings) {
    long buffers = 0;
    for (JsonObject plan : AutoExplain.plans(warnings)) {
      if (plan.getString("Query Text", "").contains("pgbus.job")
          && !plan.getString("Query Text", "").contains("pgbus.claim(")) {
        JsonObject root = plan.getJsonObject("Plan");
        buffers += blocks(root, "Shared Hit Blocks") + blocks(root, "Shared Read Blocks");
      }
    }
    return buffers;
  }

  private static long blocks(JsonObject node, String key) {
    JsonValue v = node.get(key);
    return v == null ? 0 : node.getJsonNumber(key).longValue();
  }
}

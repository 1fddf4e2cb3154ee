package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * Issue #27, "a claim whose result type survives": a later release's migration adds a column to
 * {@code pgbus.job} (and to {@code pgbus.job_history}, and recreates {@code pgbus.job_all}) while
 * this release's engines keep claiming. Sessions that claimed before the migration, with the claim
 * statement prepared on the server and the claim function's plans cached, must keep claiming after
 * it without an error: the engine calls {@code pgbus.claim_jobs}, whose result names its columns.
 *
 * <p>The same run with the previous releases' statement over {@code pgbus.claim} ({@code RETURNS
 * SETOF pgbus.job}, 0.1.0's text) shows why: its result follows the table's row type, and a cached
 * plan of it expects the old one.
 */
class ClaimResultTypeTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final String QUEUE = "widened";
  private static final int CLAIMERS = 3;
  private static final int CLAIMS_BEFORE = 6;
  private static final int CLAIMS_AFTER = 5;

  // v0.1.0's JobStore.CLAIM (as UpgradeWorkload runs it).
  private static final String OLD_CLAIM =
      """
      SELECT id, queue, priority, payload::text, attempt, max_attempts, created_at, run_at,
             trace_parent, trace_state, lane
        FROM pgbus.claim(?::text[], ?, ?, ?::float8 * interval '1 millisecond', ?::integer,
                         ?::text[], ?::integer[], ?::text[]::timestamptz[])
      """;

  // What a later release's expand migration does, as V43 and V44 did.
  private static final String WIDEN =
      """
      ALTER TABLE pgbus.job ADD COLUMN x int;
      ALTER TABLE pgbus.job_history ADD COLUMN x int;
      CREATE OR REPLACE VIEW pgbus.job_all AS
        SELECT * FROM pgbus.job
        UNION ALL
        SELECT * FROM pgbus.job_history;
      """;

  private interface Claim {
    int claim(Connection c) throws SQLException;
  }

  @Test
  void sessionsThatClaimedBeforeTheTableWidenedKeepClaimingAfterIt() throws Exception {
    db.update(
        "INSERT INTO pgbus.job (queue, payload) SELECT ?, jsonb_build_object('n', i)"
            + " FROM generate_series(1, 1000) AS i",
        QUEUE);
    JobStore store = new JobStore();
    Run engine =
        run(c -> store.jobClaim(c, List.of(QUEUE), 1, "widen-test", Duration.ofMinutes(5)).size());
    Run old = run(ClaimResultTypeTest::oldClaim);

    assertThat(engine.errors).as("the engine's claims (pgbus.claim_jobs)").isEmpty();
    assertThat(engine.claimedAfter).isEqualTo(CLAIMERS * CLAIMS_AFTER);
    // pgbus.claim returns the rows as they are now, widened; the statement each session prepared
    // before expects the old row type, and its next claim fails as 0.1.0's did in the upgrade
    // (docs/operations.md, "A large database under load").
    assertThat(old.errors)
        .as("0.1.0's statement over pgbus.claim, prepared before the widening")
        .isNotEmpty()
        .allMatch(e -> e.contains("does not match"), "a result type mismatch");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE state = 'running'"))
        .as("every claim that failed took nothing")
        .isEqualTo(
            engine.claimedBefore + engine.claimedAfter + old.claimedBefore + old.claimedAfter);
  }

  /** 0.1.0's claim of one job, through pgbus.claim. */
  private static int oldClaim(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(OLD_CLAIM)) {
      ps.setArray(1, c.createArrayOf("text", new Object[] {QUEUE}));
      ps.setInt(2, 1);
      ps.setString(3, "widen-test-old");
      ps.setLong(4, Duration.ofMinutes(5).toMillis());
      ps.setNull(5, Types.INTEGER);
      ps.setNull(6, Types.VARCHAR);
      ps.setNull(7, Types.VARCHAR);
      ps.setNull(8, Types.VARCHAR);
      int n = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          n++;
        }
      }
      return n;
    }
  }

  private static final class Run {
    final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    volatile int claimedBefore;
    volatile int claimedAfter;
  }

  /**
   * CLAIMERS sessions claim with {@code claim} (server-prepared from the first execution) until the
   * table widened, then CLAIMS_AFTER more each: the widening runs once, on the first call, between
   * them. Returns what they claimed and the errors of the claims after it.
   */
  private static Run run(Claim claim) throws Exception {
    Run run = new Run();
    CountDownLatch warmed = new CountDownLatch(CLAIMERS);
    CountDownLatch done = new CountDownLatch(CLAIMERS);
    AtomicBoolean widened = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    List<Integer> before = new ArrayList<>();
    List<Integer> after = new ArrayList<>();
    for (int i = 0; i < CLAIMERS; i++) {
      Thread t =
          new Thread(
              () -> {
                int b = 0;
                int a = 0;
                try (Connection c = db.connect()) {
                  c.unwrap(PGConnection.class).setPrepareThreshold(1);
                  for (int n = 0; n < CLAIMS_BEFORE; n++) {
                    b += claim.claim(c);
                  }
                  warmed.countDown();
                  // Claiming on while the migration runs: a claim waits for its lock, no more.
                  // A claim that ran after its commit but before the flag counts as before.
                  while (!widened.get()) {
                    try {
                      b += claim.claim(c);
                    } catch (SQLException e) {
                      run.errors.add(e.getMessage());
                    }
                  }
                  for (int n = 0; n < CLAIMS_AFTER; n++) {
                    try {
                      a += claim.claim(c);
                    } catch (SQLException e) {
                      run.errors.add(e.getMessage());
                    }
                  }
                } catch (SQLException e) {
                  run.errors.add("before the widening: " + e.getMessage());
                  warmed.countDown();
                } finally {
                  synchronized (before) {
                    before.add(b);
                    after.add(a);
                  }
                  done.countDown();
                }
              },
              "claimer-" + i);
      t.start();
      threads.add(t);
    }
    assertThat(warmed.await(60, TimeUnit.SECONDS)).as("claimers warmed up").isTrue();
    widenOnce();
    widened.set(true);
    assertThat(done.await(60, TimeUnit.SECONDS)).as("claimers done").isTrue();
    for (Thread t : threads) {
      t.join();
    }
    run.claimedBefore = before.stream().mapToInt(Integer::intValue).sum();
    run.claimedAfter = after.stream().mapToInt(Integer::intValue).sum();
    return run;
  }

  private static boolean widenedOnce;

  /** The first run widens pgbus.job by x; the second by y (each run sees a fresh widening). */
  private static void widenOnce() throws SQLException {
    String sql = widenedOnce ? WIDEN.replace(" x int", " y int") : WIDEN;
    widenedOnce = true;
    try (Connection c = db.helperConnection();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      st.execute(sql);
      c.commit();
    }
  }
}

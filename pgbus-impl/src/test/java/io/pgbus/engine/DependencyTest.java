package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.DependencyFailure;
import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A job enqueued with afterJobs runs only once its dependencies completed, released by the
 * transaction that completes the last one; a dependency that dies or is cancelled cancels or holds
 * it, as set; bad input is refused with nothing written.
 */
class DependencyTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Jobs jobs = new Jobs("dependency-test", 1 << 20, JobTracing.NONE);
  private final JobStore store = new JobStore();

  /** Handled job ids in the order their handlers ran. */
  private final List<Long> ran = new CopyOnWriteArrayList<>();

  private final Map<Long, Map<Long, String>> seenResults = new ConcurrentHashMap<>();
  private final Set<Long> failing = ConcurrentHashMap.newKeySet();

  @BeforeEach
  void freshTables() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.job_dependency");
  }

  private void startEngine(String queue) {
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), 0))
                    .capsule(new CapsuleConfig("d", List.of(queue), 4))
                    .build())
            .jobs(
                (job, tx) -> {
                  if (failing.contains(job.id())) {
                    throw new IllegalStateException("job " + job.id() + " fails");
                  }
                  seenResults.put(job.id(), job.dependencyResults());
                  ran.add(job.id());
                  return Outcome.completeJson("{\"from\":" + job.id() + "}");
                }));
  }

  private long enqueue(String queue, EnqueueOptions options) throws Exception {
    try (Connection c = db.connect()) {
      return jobs.enqueue(c, new NewJob(queue, "{}", options));
    }
  }

  @Test
  void aChainRunsInOrderAndEachLinkReadsTheResultOfTheOneBefore() throws Exception {
    long a = enqueue("dep_chain", EnqueueOptions.defaults());
    long b = enqueue("dep_chain", EnqueueOptions.defaults().afterJobs(a));
    long c = enqueue("dep_chain", EnqueueOptions.defaults().withPriority(-100).afterJobs(b));
    assertThat(db.job(b).state()).isEqualTo("scheduled");
    startEngine("dep_chain");

    Await.until("the chain to run", Duration.ofSeconds(30), () -> ran.size() == 3);
    assertThat(ran).containsExactly(a, b, c);
    assertThat(seenResults.get(b)).isEqualTo(Map.of(a, "{\"from\": " + a + "}"));
    assertThat(seenResults.get(c)).isEqualTo(Map.of(b, "{\"from\": " + b + "}"));
    // The handler notes its run before its completion commits; the edges go with the commit.
    Await.until(
        "the edges of the completed dependents to go",
        Duration.ofSeconds(30),
        () -> db.queryLong("SELECT count(*) FROM pgbus.job_dependency") == 0);
  }

  @Test
  void aDeadDependencyCancelsTheChainBehindItByDefaultAndNoneOfItRuns() throws Exception {
    long a = enqueue("dep_dead", EnqueueOptions.defaults().withMaxAttempts(1));
    failing.add(a);
    long b = enqueue("dep_dead", EnqueueOptions.defaults().afterJobs(a));
    long c = enqueue("dep_dead", EnqueueOptions.defaults().afterJobs(b));
    startEngine("dep_dead");

    Await.until(
        "the dependents to be cancelled",
        Duration.ofSeconds(30),
        () -> db.job(c).state().equals("cancelled"));
    assertThat(db.job(a).state()).isEqualTo("dead");
    assertThat(db.job(b).state()).isEqualTo("cancelled");
    assertThat(ran).isEmpty();
  }

  @Test
  void aHeldDependentWaitsForAReplayOfItsDeadDependencyAndRunsWhenThatCompletes() throws Exception {
    long a = enqueue("dep_hold", EnqueueOptions.defaults().withMaxAttempts(1));
    failing.add(a);
    long b = enqueue("dep_hold", EnqueueOptions.defaults().afterJobs(DependencyFailure.HOLD, a));
    long c = enqueue("dep_hold", EnqueueOptions.defaults().afterJobs(DependencyFailure.HOLD, b));
    startEngine("dep_hold");

    Await.until(
        "the dependency to die", Duration.ofSeconds(30), () -> db.job(a).state().equals("dead"));
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_dependency WHERE state = 'failed'"))
        .isEqualTo(1);
    assertThat(db.job(b).state()).isEqualTo("scheduled");
    assertThat(db.job(c).state()).isEqualTo("scheduled");
    assertThat(ran).isEmpty();

    failing.remove(a);
    try (Connection conn = db.connect()) {
      assertThat(jobs.replay(conn, a)).isTrue();
    }
    Await.until("the chain to run after the replay", Duration.ofSeconds(30), () -> ran.size() == 3);
    assertThat(ran).containsExactly(a, b, c);
  }

  @Test
  void aDeathAndItsReportToTheDependentsCommitTogetherOrNotAtAll() throws Exception {
    // The engine records a failure after the handler's transaction rolled back. The report to the
    // dependents (pgbus.job_finished) is made to fail here: the death must roll back with it, or
    // the dependent would wait for good behind a dead job whose edge still says 'waiting'. A
    // sequence (not transactional) tells the test that the report was tried.
    long a = enqueue("dep_atomic", EnqueueOptions.defaults().withMaxAttempts(1));
    failing.add(a);
    long b = enqueue("dep_atomic", EnqueueOptions.defaults().afterJobs(a));
    db.update("CREATE SEQUENCE public.refused_edges");
    db.update(
        "CREATE FUNCTION public.refuse_edges() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " PERFORM nextval('public.refused_edges');"
            + " RAISE EXCEPTION 'edge update refused by the test'; END $$");
    db.update(
        "CREATE TRIGGER refuse_edges BEFORE UPDATE ON pgbus.job_dependency"
            + " FOR EACH ROW EXECUTE FUNCTION public.refuse_edges()");
    try {
      startEngine("dep_atomic");
      Await.until(
          "the report of the death to be tried",
          Duration.ofSeconds(30),
          () -> db.queryLong("SELECT last_value FROM public.refused_edges WHERE is_called") > 0);
      // The failed report rolled back the death: the job is still running (lease rescue retries
      // it), and its dependent waits on an edge that still says waiting, consistently.
      assertThat(db.job(a).state())
          .as("the death rolled back with its report")
          .isEqualTo("running");
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_dependency WHERE state = 'waiting'"))
          .isEqualTo(1);
      assertThat(db.job(b).state()).isEqualTo("scheduled");
    } finally {
      db.update("DROP TRIGGER IF EXISTS refuse_edges ON pgbus.job_dependency");
      db.update("DROP FUNCTION IF EXISTS public.refuse_edges()");
      db.update("DROP SEQUENCE IF EXISTS public.refused_edges");
    }
  }

  @Test
  void aCancelledDependencyCancelsOrHoldsEachDependentAsSetPerDependency() throws Exception {
    long a = enqueue("dep_cancel", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long other = enqueue("dep_cancel", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long cancelled = enqueue("dep_cancel", EnqueueOptions.defaults().afterJobs(a));
    long held =
        enqueue(
            "dep_cancel",
            EnqueueOptions.defaults().afterJobs(other).afterJobs(DependencyFailure.HOLD, a));
    try (Connection c = db.connect()) {
      assertThat(jobs.cancel(c, a)).isTrue();
    }
    assertThat(db.job(cancelled).state()).isEqualTo("cancelled");
    assertThat(db.job(held).state()).isEqualTo("scheduled");
    // A dependent enqueued after its dependency was cancelled is cancelled (or held) at once.
    long late = enqueue("dep_cancel", EnqueueOptions.defaults().afterJobs(a));
    assertThat(db.job(late).state()).isEqualTo("cancelled");
  }

  @Test
  void aDependencyBuriedByTheClaimCancelsOrHoldsItsDependentsAndNoneRuns() throws Exception {
    // Within the limit when enqueued, over it at the claim: buried dead there, never run.
    String big = "{\"blob\":\"" + "x".repeat(4000) + "\"}";
    long a;
    try (Connection c = db.connect()) {
      a = jobs.enqueue(c, new NewJob("dep_buried", big, EnqueueOptions.defaults()));
    }
    long cancelled = enqueue("dep_buried_next", EnqueueOptions.defaults().afterJobs(a));
    long chained = enqueue("dep_buried_next", EnqueueOptions.defaults().afterJobs(cancelled));
    long held =
        enqueue("dep_buried_next", EnqueueOptions.defaults().afterJobs(DependencyFailure.HOLD, a));
    try {
      db.update("UPDATE pgbus.setting SET max_payload_bytes = 2000");
      try (Connection c = db.connect()) {
        assertThat(store.jobClaim(c, List.of("dep_buried"), 1, "w", Duration.ofMinutes(1)))
            .isEmpty();
      }
    } finally {
      db.update("UPDATE pgbus.setting SET max_payload_bytes = 1048576");
    }
    assertThat(db.job(a).state()).isEqualTo("dead");
    assertThat(db.job(cancelled).state()).isEqualTo("cancelled");
    assertThat(db.job(chained).state()).as("cancelled down the chain").isEqualTo("cancelled");
    assertThat(db.job(held).state()).isEqualTo("scheduled");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_dependency WHERE job_id = ? AND state = 'failed'",
                held))
        .isEqualTo(1);
    startEngine("dep_buried_next");
    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, List.of("dep_buried_next"), 10, "w", Duration.ofMinutes(1)))
          .as("nothing of the chain is runnable")
          .isEmpty();
    }
    assertThat(ran).isEmpty();
  }

  @Test
  void aDependencyThatCompletedAlreadyCountsAsDoneAndItsResultIsPassedOn() throws Exception {
    long a = enqueue("dep_done", EnqueueOptions.defaults());
    try (Connection c = db.connect()) {
      ClaimedJob held =
          store.jobClaim(c, List.of("dep_done"), 1, "w", Duration.ofMinutes(1)).get(0);
      store.jobCompleteWithResult(c, held, "{\"total\":3}");
    }
    long b = enqueue("dep_done", EnqueueOptions.defaults().afterJobs(a));
    assertThat(db.job(b).state()).isEqualTo("available");
    startEngine("dep_done");
    Await.until("the dependent to run", Duration.ofSeconds(30), () -> ran.contains(b));
    assertThat(seenResults.get(b)).isEqualTo(Map.of(a, "{\"total\": 3}"));
  }

  // Issue #23, item 4: the enqueue of a dependent no longer locks its dependencies' rows until its
  // transaction ends. HELD_OPEN is how long the test keeps such a transaction open at most; the
  // dependency's completion must be done well within it.
  private static final Duration HELD_OPEN = Duration.ofSeconds(10);

  /** Claims the one available job of {@code queue}, as a worker would. */
  private ClaimedJob claimOne(String queue) throws Exception {
    try (Connection c = db.connect()) {
      return store.jobClaim(c, List.of(queue), 1, "w", Duration.ofMinutes(5)).get(0);
    }
  }

  /** A connection in a transaction that enqueued a dependent of {@code on}, still open. */
  private Connection openEnqueue(String queue, EnqueueOptions options, long[] id) throws Exception {
    Connection c = db.connect();
    c.setAutoCommit(false);
    id[0] = jobs.enqueue(c, new NewJob(queue, "{}", options));
    return c;
  }

  @Test
  void aRunningDependencyCompletesPromptlyWhileItsDependentsEnqueueStaysOpenAndTheDependentRuns()
      throws Exception {
    long a = enqueue("dep_held", EnqueueOptions.defaults());
    ClaimedJob running = claimOne("dep_held");
    long[] b = new long[1];
    try (Connection enqueuer = openEnqueue("dep_held", EnqueueOptions.defaults().afterJobs(a), b)) {
      // The dependency's worker completes it while the dependent's transaction is open.
      var completion =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                try (Connection c = db.connect()) {
                  long t0 = System.nanoTime();
                  assertThat(store.jobCompleteWithResult(c, running, "{\"total\":7}")).isTrue();
                  return Duration.ofNanos(System.nanoTime() - t0);
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      Duration took;
      try {
        took = completion.get(HELD_OPEN.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        enqueuer.rollback(); // lets the blocked completion go before the test fails
        throw new AssertionError(
            "the dependency's completion waited for the dependent's open transaction", e);
      }
      System.out.printf(
          "[measure] a dependency completed in %d ms under a dependent's open enqueue%n",
          took.toMillis());
      assertThat(took).as("the completion's time").isLessThan(HELD_OPEN.dividedBy(5));
      assertThat(db.job(a).state()).isEqualTo("completed");
      // Its finisher could not see the uncommitted edge: the dependent's commit settles it.
      enqueuer.commit();
    }
    assertThat(db.job(b[0]).state())
        .as("the dependent, released at its commit")
        .isEqualTo("available");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ? AND linked", a)).isOne();
    startEngine("dep_held");
    Await.until("the dependent to run", Duration.ofSeconds(30), () -> ran.contains(b[0]));
    assertThat(seenResults.get(b[0])).isEqualTo(Map.of(a, "{\"total\": 7}"));
  }

  @Test
  void aDependencyWhoseCompletionIsUncommittedWhenTheDependentIsEnqueuedStillReleasesIt()
      throws Exception {
    long a = enqueue("dep_order", EnqueueOptions.defaults());
    ClaimedJob running = claimOne("dep_order");
    try (Connection finisher = db.connect()) {
      finisher.setAutoCommit(false);
      assertThat(store.jobComplete(finisher, running)).isTrue(); // written, not committed
      var enqueued =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                long[] b = new long[1];
                try (Connection c =
                    openEnqueue("dep_order", EnqueueOptions.defaults().afterJobs(a), b)) {
                  c.commit(); // waits at its commit for the finisher's, a moment
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
                return b[0];
              });
      Thread.sleep(300); // the enqueue reads the dependency as running, and reaches its commit
      finisher.commit();
      long b = enqueued.get(HELD_OPEN.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      assertThat(db.job(b).state()).as("the dependent").isEqualTo("available");
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.job_dependency WHERE job_id = ? AND state = 'completed'",
                  b))
          .isOne();
    }
  }

  @Test
  void aDependencyThatDiesWhileTheDependentsEnqueueStaysOpenCancelsOrHoldsItAtItsCommit()
      throws Exception {
    long a = enqueue("dep_dies", EnqueueOptions.defaults().withMaxAttempts(1));
    ClaimedJob running = claimOne("dep_dies");
    long[] cancelled = new long[1];
    long held;
    try (Connection enqueuer =
        openEnqueue("dep_dies", EnqueueOptions.defaults().afterJobs(a), cancelled)) {
      held =
          jobs.enqueue(
              enqueuer,
              new NewJob(
                  "dep_dies",
                  "{}",
                  EnqueueOptions.defaults().afterJobs(DependencyFailure.HOLD, a)));
      var death =
          java.util.concurrent.CompletableFuture.runAsync(
              () -> {
                try (Connection c = db.connect()) {
                  assertThat(store.jobFail(c, running, "boom", Duration.ZERO).dead()).isTrue();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      try {
        death.get(HELD_OPEN.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        enqueuer.rollback();
        throw new AssertionError("the death waited for the dependents' open transaction", e);
      }
      enqueuer.commit();
    }
    assertThat(db.job(a).state()).isEqualTo("dead");
    assertThat(db.job(cancelled[0]).state())
        .as("the dependent set to cancel")
        .isEqualTo("cancelled");
    assertThat(db.job(held).state()).as("the dependent set to hold").isEqualTo("scheduled");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_dependency WHERE job_id = ? AND state = 'failed'",
                held))
        .isOne();
  }

  @Test
  void aDependencyDeletedOnCompletionWhileTheDependentsEnqueueStaysOpenCountsAsCompleted()
      throws Exception {
    long a = enqueue("dep_gone", EnqueueOptions.defaults());
    ClaimedJob running = claimOne("dep_gone");
    long[] b = new long[1];
    try (Connection enqueuer = openEnqueue("dep_gone", EnqueueOptions.defaults().afterJobs(a), b)) {
      try (Connection c = db.connect()) {
        c.setNetworkTimeout(Runnable::run, (int) HELD_OPEN.toMillis());
        assertThat(store.jobComplete(c, running, true)).isTrue(); // pgbus.retention.completed=0
      }
      enqueuer.commit();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ?", a)).isZero();
    assertThat(db.job(b[0]).state()).as("the dependent").isEqualTo("available");
  }

  @RegisterExtension static final TestDatabase previous = TestDatabase.migrated();

  @Test
  void thePreviousReleasesEnqueueAfterStillWorksOnThisSchema() throws Exception {
    String sql;
    try (var in = DependencyTest.class.getResourceAsStream("previous-enqueue-after.sql")) {
      sql = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    try (Connection c = previous.connect();
        var st = c.createStatement()) {
      st.execute(sql);
    }
    assertThat(
            previous.queryLong(
                "SELECT count(*) FROM pg_proc WHERE proname = 'enqueue_after'"
                    + " AND prosrc LIKE '%Lock and mark the dependencies%'"))
        .as("the previous body, installed")
        .isOne();
    long a;
    long b;
    long done;
    long c2;
    try (Connection c = previous.connect()) {
      a = jobs.enqueue(c, new NewJob("dep_prev", "{}", EnqueueOptions.defaults()));
      done = jobs.enqueue(c, new NewJob("dep_prev_done", "{}", EnqueueOptions.defaults()));
      ClaimedJob finished =
          store.jobClaim(c, List.of("dep_prev_done"), 1, "w", Duration.ofMinutes(5)).get(0);
      assertThat(store.jobComplete(c, finished)).isTrue();
      c.setAutoCommit(false);
      b = jobs.enqueue(c, new NewJob("dep_prev", "{}", EnqueueOptions.defaults().afterJobs(a)));
      c2 = jobs.enqueue(c, new NewJob("dep_prev", "{}", EnqueueOptions.defaults().afterJobs(done)));
      c.commit();
      c.setAutoCommit(true);
      assertThat(previous.job(b).state()).isEqualTo("scheduled");
      assertThat(previous.job(c2).state()).as("after a completed job").isEqualTo("available");
      ClaimedJob running =
          store.jobClaim(c, List.of("dep_prev"), 2, "w", Duration.ofMinutes(5)).stream()
              .filter(j -> j.id() == a)
              .findFirst()
              .orElseThrow();
      assertThat(store.jobComplete(c, running)).isTrue();
    }
    assertThat(previous.job(b).state())
        .as("released by its dependency's completion")
        .isEqualTo("available");
  }

  @Test
  void anUnknownJobIdIsRefusedNamingItAndNothingIsWritten() throws Exception {
    long a = enqueue("dep_bad", EnqueueOptions.defaults());
    long next = a + 1_000;
    // A cycle would need a job to wait on one enqueued after it: that id does not exist yet.
    assertThatThrownBy(() -> enqueue("dep_bad", EnqueueOptions.defaults().afterJobs(a, next)))
        .isInstanceOf(PgbusException.class)
        .hasMessageContaining("unknown job id(s) {" + next + "}");
    assertThat(db.jobCount()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE linked")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_dependency")).isZero();
  }

  @Test
  void aCycleCannotBeFormedAJobThatWouldWaitOnItselfIsRefusedAndNothingIsWritten()
      throws Exception {
    long a = enqueue("dep_cycle", EnqueueOptions.defaults());
    // The id the next job gets: a job enqueued to wait on it would wait on itself (a -> self), the
    // one cycle a single enqueue could try to close; any longer cycle needs a later id as well.
    long self = db.queryLong("SELECT pg_catalog.pg_sequence_last_value('pgbus.job_id_seq') + 1");
    assertThatThrownBy(() -> enqueue("dep_cycle", EnqueueOptions.defaults().afterJobs(a, self)))
        .isInstanceOf(PgbusException.class)
        .hasMessageContaining("unknown job id(s) {" + self + "}")
        .hasMessageContaining("depend only on jobs that exist");
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT id FROM pgbus.enqueue_after('dep_cycle', '{}',"
                        + " ARRAY[pg_catalog.pg_sequence_last_value('pgbus.job_id_seq') + 1])"))
        .rootCause()
        .hasMessageContaining("unknown job id(s)");
    assertThat(db.jobCount()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE linked")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_dependency")).isZero();
  }

  @Test
  void aRolledBackDependentLeavesNoEdgeAndNoMarkBehind() throws Exception {
    long a = enqueue("dep_rollback", EnqueueOptions.defaults());
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      jobs.enqueue(c, new NewJob("dep_rollback", "{}", EnqueueOptions.defaults().afterJobs(a)));
      c.rollback();
    }
    assertThat(db.jobCount()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE linked")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_dependency")).isZero();
  }

  @Test
  void theBoundsAreKeptInJavaAndInSql() throws Exception {
    long[] tooMany = LongStream.rangeClosed(1, EnqueueOptions.MAX_DEPENDENCIES + 1).toArray();
    assertThatThrownBy(() -> EnqueueOptions.defaults().afterJobs(tooMany))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("at most 100 jobs, not 101");
    assertThatThrownBy(() -> EnqueueOptions.defaults().afterJobs(0))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("dependency job id 0 is not a job id");
    long a = enqueue("dep_bounds", EnqueueOptions.defaults());
    assertThatThrownBy(
            () ->
                enqueue(
                    "dep_bounds",
                    EnqueueOptions.defaults().withDelay(Duration.ofMinutes(1)).afterJobs(a)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("drop runAt/delay");
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT id FROM pgbus.enqueue_after('dep_bounds', '{}',"
                        + " ARRAY(SELECT g::bigint FROM generate_series(1, 101) g))"))
        .rootCause()
        .hasMessageContaining("over the limit of 100 dependencies per job");
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT id FROM pgbus.enqueue_after('dep_bounds', '{}', ARRAY[?::bigint],"
                        + " ARRAY['maybe'])",
                    a))
        .rootCause()
        .hasMessageContaining("must give hold or cancel");
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void anOperatorRetryDoesNotStartAJobThatStillWaits() throws Exception {
    long a = enqueue("dep_retry", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long b = enqueue("dep_retry", EnqueueOptions.defaults().afterJobs(a));
    try (Connection c = db.connect()) {
      new JobAdminStore()
          .jobAct(
              c,
              JobAdminStore.Action.RETRY,
              io.pgbus.admin.JobFilter.all().withQueue("dep_retry"),
              100,
              null);
    }
    assertThat(db.job(a).state()).isEqualTo("available");
    assertThat(db.job(b).state()).isEqualTo("scheduled");
  }
}

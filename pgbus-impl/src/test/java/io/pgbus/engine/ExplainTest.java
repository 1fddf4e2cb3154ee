package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.DependencyFailure;
import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedBatch;
import io.pgbus.Outcome;
import io.pgbus.admin.Explanation;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import io.pgbus.admin.QueueBlockers;
import io.pgbus.admin.Reason;
import io.pgbus.engine.JobAdminStore.Action;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * "Why isn't this job running?" (pgbus.explain, issue #28) for every cause on a real PostgreSQL:
 * each test creates the condition, checks the reason's code and evidence, applies the action the
 * reason names, and checks the job then completes within the time the reason gave (its resolves_at,
 * plus {@link #SLACK} for the engine to claim and run it).
 */
class ExplainTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach(
              "pgbus.job_dependency",
              "pgbus.batch",
              "pgbus.job",
              "pgbus.queue_pause",
              "pgbus.queue_limit",
              "pgbus.audit",
              "pgbus.node",
              "pgbus.leader");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Duration SLACK = Duration.ofSeconds(5);

  private final JobFixtures fixtures = JobFixtures.in(db);
  private final Jobs jobs = new Jobs(EngineConfig.builder().build());

  @Test
  void aJobThatDoesNotExistHasNoExplanation() throws SQLException {
    try (Connection c = db.connect()) {
      assertThat(jobs.explain(c, 123_456_789L)).isEmpty();
    }
  }

  @Test
  void aDelayedJobIsDueLaterAndRunsWhenItsTimeComes() {
    start("later");
    long id = fixtures.enqueue("later", EnqueueOptions.defaults().withDelay(Duration.ofSeconds(2)));

    Reason r = only(explain(id), Reason.DUE_LATER);
    assertThat(r.resolvesAt()).isAfter(Instant.now());
    assertThat(evidence(r, "run_at")).isNotNull();

    assertCompletesBy(id, r.resolvesAt().plus(SLACK));
  }

  @Test
  void aRetryInBackoffNamesItsLastErrorAndRunsWhenRetriedNow() throws SQLException {
    start("backoff");
    long id = fixtures.enqueue("backoff");
    db.update(
        """
        UPDATE pgbus.job SET state = 'retryable', attempt = 1, run_at = now() + interval '1 hour',
               errors = '[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "error": "timeout at the bank"}]'
         WHERE id = ?
        """,
        id);

    Reason r = only(explain(id), Reason.RETRY_BACKOFF);
    assertThat(r.error()).isEqualTo("timeout at the bank");
    assertThat(evidence(r, "attempt")).isEqualTo("1");
    assertThat(r.action()).contains("retryNow");

    Instant acted = Instant.now();
    try (Connection c = db.connect()) {
      assertThat(new JobAdminStore().jobAct(c, Action.RETRY, JobFilter.byId(id), 1, "ops"))
          .isEqualTo(1);
    }
    assertThat(first(explain(id)).code()).isIn(Reason.RUNNABLE_NOW, Reason.RUNNING);
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void aPausedQueueSaysByWhomAndSinceWhenAndRunsOnResume() throws SQLException {
    start("held");
    try (Connection c = db.connect()) {
      jobs.pause(c, "held", "ops-console");
    }
    long id = fixtures.enqueue("held");

    Reason r = only(explain(id), Reason.QUEUE_PAUSED);
    assertThat(evidence(r, "actor")).isEqualTo("ops-console");
    assertThat(r.sentence()).contains("ops-console");
    assertThat(evidence(r, "paused_at")).isNotNull();
    assertThat(r.action()).contains("resume");

    Instant acted = Instant.now();
    try (Connection c = db.connect()) {
      jobs.resume(c, "held");
    }
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void aQueueNoCapsuleReadsListsTheCapsulesThatExistAndRunsOnceOneReadsIt() {
    Engine other = start("elsewhere");
    long id = fixtures.enqueue("orphan");

    Reason r = only(explain(id), Reason.NO_LIVE_READER);
    assertThat(evidence(r, "capsules")).isEqualTo("[]");
    assertThat(evidence(r, "fleet")).contains(other.config().workerId(), "elsewhere");
    assertThat(r.action()).contains("pgbus.capsule.<name>.queues");

    Instant acted = Instant.now();
    start("orphan");
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void busyReadersShowTheirSlotsAndInFlightJobsAndTheJobRunsWhenASlotFrees() throws Exception {
    var release = new CountDownLatch(1);
    Engine engine = startBlocking(engines.config().capsule("main", 1, "busy"), "busy", release);
    long first = runningThenWaiting("busy", EnqueueOptions.defaults());
    long id = first + 1;

    Reason r = only(explain(id), Reason.READERS_BUSY);
    assertThat(evidence(r, "readers,0,worker")).isEqualTo(engine.config().workerId());
    assertThat(evidence(r, "readers,0,slots")).isEqualTo("1");
    assertThat(evidence(r, "readers,0,busy")).isEqualTo("1");
    assertThat(evidence(r, "readers,0,in_flight")).isEqualTo("[" + first + "]");

    releaseAndAssertRuns(release, id);
  }

  @Test
  void aGlobalLimitListsTheRunningExecutionsAndTheJobRunsWhenOneEnds() throws Exception {
    var release = new CountDownLatch(1);
    startBlocking(
        engines.config().capsule("main", 4, "capped").queueLimit(new QueueLimit("capped", 1, null)),
        "capped",
        release);
    long first = runningThenWaiting("capped", EnqueueOptions.defaults());
    long id = first + 1;

    Reason r = only(explain(id), Reason.GLOBAL_LIMIT);
    assertThat(evidence(r, "global_concurrency")).isEqualTo("1");
    assertThat(evidence(r, "executions")).isEqualTo("1");
    assertThat(evidence(r, "running,0,job")).isEqualTo(String.valueOf(first));
    assertThat(r.action()).contains("pgbus.queue.capped.global-concurrency");

    releaseAndAssertRuns(release, id);
  }

  @Test
  void aKeyAtItsLimitNamesItsRunningJobsAndTheJobRunsWhenTheyEnd() throws Exception {
    var release = new CountDownLatch(1);
    startBlocking(
        engines.config().capsule("main", 4, "keyed").queueLimit(new QueueLimit("keyed", null, 1)),
        "keyed",
        release);
    long first =
        runningThenWaiting("keyed", EnqueueOptions.defaults().withConcurrencyKey("customer-7"));
    long id = first + 1;

    Reason r = only(explain(id), Reason.KEY_LIMIT);
    assertThat(evidence(r, "key")).isEqualTo("customer-7");
    assertThat(evidence(r, "running")).isEqualTo("[" + first + "]");

    releaseAndAssertRuns(release, id);
  }

  @Test
  void aFifoKeyHeldByADeadJobNamesItAndRunsOnceItIsReplayed() throws SQLException {
    start(
        engines
            .config()
            .capsule("main", 4, "ordered")
            .queueLimit(new QueueLimit("ordered", null, null, null, null, true, null)));
    EnqueueOptions key = EnqueueOptions.defaults().withConcurrencyKey("account-1");
    long dead = fixtures.enqueue("ordered", key);
    awaitState(dead, "completed");
    db.update(
        "UPDATE pgbus.job SET state = 'dead', errors = '[{\"attempt\":1,\"at\":\"2026-01-01T00:00:00Z\",\"error\":\"card declined\"}]'"
            + " WHERE id = ?",
        dead);
    long id = fixtures.enqueue("ordered", key);

    Reason r = only(explain(id), Reason.FIFO_HEAD_BLOCKED);
    assertThat(evidence(r, "blocking_job")).isEqualTo(String.valueOf(dead));
    assertThat(evidence(r, "blocking_state")).isEqualTo("dead");
    assertThat(r.error()).isEqualTo("card declined");
    assertThat(r.action()).contains("Replay or cancel job " + dead);

    Instant acted = Instant.now();
    try (Connection c = db.connect()) {
      assertThat(jobs.replay(c, dead, "ops")).isTrue();
    }
    assertCompletesBy(dead, acted.plus(SLACK));
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void aSpentRateWindowSaysWhenTheNextOneOpensAndTheJobRunsThen() {
    start(
        engines
            .config()
            .capsule("main", 4, "rated")
            .queueLimit(new QueueLimit("rated", null, null, 1, Duration.ofSeconds(4))));
    db.update(
        "UPDATE pgbus.queue_limit SET rate_count = 1,"
            + " rate_window_start = pgbus.rate_window_start(interval '4 seconds')"
            + " WHERE queue = 'rated'");
    long id = fixtures.enqueue("rated");

    Explanation e = explain(id);
    if (e.state() == JobState.COMPLETED || e.state() == JobState.RUNNING) {
      return; // the window rolled over between the update and the enqueue: nothing to explain
    }
    Reason r = only(e, Reason.RATE_WINDOW_SPENT);
    assertThat(evidence(r, "rate_limit")).isEqualTo("1");
    assertThat(evidence(r, "starts")).isEqualTo("1");
    assertThat(r.resolvesAt()).isAfter(Instant.now().minusSeconds(1));
    assertThat(r.resolvesAt()).isBefore(Instant.now().plusSeconds(5));

    // The action is to wait for the next window.
    assertCompletesBy(id, r.resolvesAt().plus(SLACK));
  }

  @Test
  void aJobHeldByAFailedDependencyNamesItAndRunsOnceTheDependencyIsReplayedAndCompletes()
      throws SQLException {
    start(
        engines.config().capsule("main", 2, "upstream", "downstream"),
        (job, tx) ->
            job.attempt() == 1 && job.queue().equals("upstream")
                ? Outcome.retry("upstream down")
                : Outcome.complete());
    long dep = fixtures.enqueue("upstream", EnqueueOptions.defaults().withMaxAttempts(1));
    awaitState(dep, "dead");
    long id;
    try (Connection c = db.connect()) {
      id =
          jobs.enqueue(
              c,
              new NewJob(
                  "downstream",
                  "{}",
                  EnqueueOptions.defaults().afterJobs(DependencyFailure.HOLD, dep)));
    }

    Reason r = only(explain(id), Reason.WAITING_ON_DEPENDENCIES);
    assertThat(evidence(r, "dependencies,0,job")).isEqualTo(String.valueOf(dep));
    assertThat(evidence(r, "dependencies,0,state")).isEqualTo("dead");
    assertThat(evidence(r, "dependencies,0,edge")).isEqualTo("failed");
    assertThat(evidence(r, "dependencies,0,on_failure")).isEqualTo("hold");
    assertThat(evidence(r, "held")).isEqualTo("1");
    assertThat(r.action()).contains("Replay the failed dependencies");

    Instant acted = Instant.now();
    try (Connection c = db.connect()) {
      assertThat(jobs.replay(c, dep, "ops")).isTrue();
    }
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void aBatchMemberSaysHowManyMembersTheCallbackWaitsFor() throws SQLException {
    EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(NewJob.of("members", "{}"), NewJob.of("members", "{}")),
              NewJob.of("members_done", "{}"));
    }
    long member = batch.jobIds().get(0);

    Reason r = reason(explain(member), Reason.BATCH_CALLBACK_WAITING);
    assertThat(evidence(r, "batch")).isEqualTo(String.valueOf(batch.batchId()));
    assertThat(evidence(r, "pending")).isEqualTo("2");
    assertThat(evidence(r, "callback_queue")).isEqualTo("members_done");

    start("members", "members_done");
    for (long m : batch.jobIds()) {
      assertCompletesBy(m, Instant.now().plus(SLACK));
    }
    Await.until(
        "the batch callback to complete",
        WAIT,
        () ->
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE queue = 'members_done' AND state = 'completed'"),
        n -> n == 1);
  }

  @Test
  void aLongTransactionEngagesClaimFloorsAndTheJobRunsOnceItEnds() throws Exception {
    try (Connection old = db.helperConnection()) {
      old.setAutoCommit(false);
      old.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (var st = old.createStatement()) {
        st.execute("SELECT 1"); // takes the snapshot that holds vacuum back
      }
      long id = fixtures.enqueue("floored");
      Reason r =
          Await.until(
              "the old transaction to count as long",
              WAIT,
              () -> reasonOrNull(explain(id), Reason.CLAIM_FLOORS),
              x -> x != null);
      assertThat(evidence(r, "pid")).isNotNull();
      assertThat(r.action()).contains("End the long transaction");
      assertThat(r.resolvesAt()).isBefore(Instant.now().plusSeconds(11));

      old.rollback();
      Instant acted = Instant.now();
      start("floored");
      assertCompletesBy(id, acted.plus(Duration.ofSeconds(10)).plus(SLACK));
    }
  }

  @Test
  void aRunningJobShowsItsWorkerProgressAndHeartbeatThenItsCompletion() throws Exception {
    var release = new CountDownLatch(1);
    Engine engine =
        start(
            engines.config().capsule("main", 1, "working"),
            (job, tx) -> {
              job.progress(40, "halfway");
              release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
              return Outcome.complete();
            });
    long id = fixtures.enqueue("working");
    Reason r =
        Await.until(
            "the job to report progress",
            WAIT,
            () -> reasonOrNull(explain(id), Reason.RUNNING),
            x -> x != null && evidence(x, "progress,percent") != null);
    assertThat(evidence(r, "worker")).isEqualTo(engine.config().workerId());
    assertThat(evidence(r, "heartbeat")).isNotNull();
    assertThat(evidence(r, "progress,message")).isEqualTo("halfway");

    release.countDown();
    assertCompletesBy(id, Instant.now().plus(SLACK));
    assertThat(only(explain(id), Reason.COMPLETED).resolvesAt()).isNull();
  }

  @Test
  void aJobOfADeadNodeGivesTheRescueEtaAndRunsAgainByThen() {
    start(
        engines
            .config()
            .set(ExecutionConfig.HEARTBEAT_TTL, Duration.ofSeconds(3))
            .capsule("main", 2, "stranded"));
    Await.until(
        "a maintenance leader",
        WAIT,
        () -> db.queryLong("SELECT count(*) FROM pgbus.leader WHERE expires_at > now()"),
        n -> n == 1);
    db.update(
        """
        INSERT INTO pgbus.node (worker_id, host, started_at, seen_at, listener, mode, capsules,
                                heartbeat_ttl_ms)
        VALUES ('gone-jvm', 'host-9', now() - interval '10 minutes', now() - interval '1 minute',
                'down', 'notify', '[{"name":"main","queues":["stranded"],"concurrency":2}]', 3000)
        """);
    long id =
        db.queryLong(
            """
            INSERT INTO pgbus.job (queue, payload, state, attempt, attempted_at, attempted_by,
                                   lease_expires_at)
            VALUES ('stranded', '{}', 'running', 1, now(), 'gone-jvm', now() + interval '5 minutes')
            RETURNING id
            """);

    Reason r = only(explain(id), Reason.RUNNING_DEAD_NODE);
    assertThat(evidence(r, "worker")).isEqualTo("gone-jvm");
    assertThat(evidence(r, "leader")).isNotNull();
    assertThat(r.resolvesAt()).isBefore(Instant.now().plusSeconds(5));

    // The action is "none needed: the leader rescues it".
    assertCompletesBy(id, r.resolvesAt().plus(SLACK));
  }

  @Test
  void aDeadJobGivesItsLastErrorAndRunsOnceReplayed() throws SQLException {
    start(
        engines.config().capsule("main", 2, "fragile"),
        (job, tx) -> job.attempt() == 1 ? Outcome.retry("disk full") : Outcome.complete());
    long id = fixtures.enqueue("fragile", EnqueueOptions.defaults().withMaxAttempts(1));
    awaitState(id, "dead");

    Reason r = only(explain(id), Reason.DEAD);
    assertThat(r.error()).contains("disk full");
    assertThat(evidence(r, "attempt")).isEqualTo("1");
    assertThat(r.action()).contains("replay");
    assertThat(explain(id).withoutErrors().reasons().get(0).error()).isNull();

    Instant acted = Instant.now();
    try (Connection c = db.connect()) {
      assertThat(jobs.replay(c, id, "ops")).isTrue();
    }
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void anOversizedJobIsMovedAsideAndRunsOnceTheLimitIsRaisedAndItIsReplayed() throws SQLException {
    start("bulky");
    db.update("UPDATE pgbus.setting SET max_payload_bytes = 2000");
    long id =
        db.queryLong(
            """
            INSERT INTO pgbus.job (queue, payload)
            SELECT 'bulky', jsonb_build_object('rows', string_agg(md5(i::text), ''))
              FROM generate_series(1, 100) i
            RETURNING id
            """);
    db.queryLong("SELECT count(*) FROM (SELECT pg_notify('pgbus_bulky', '')) n");
    awaitState(id, "dead");

    Reason r = only(explain(id), Reason.OVERSIZED);
    assertThat(evidence(r, "max_payload_bytes")).isEqualTo("2000");
    assertThat(Long.parseLong(evidence(r, "payload_bytes"))).isGreaterThan(2000);
    assertThat(r.action()).contains("pgbus.max-payload-bytes", "replay");

    Instant acted = Instant.now();
    db.update("UPDATE pgbus.setting SET max_payload_bytes = 1048576");
    try (Connection c = db.connect()) {
      assertThat(jobs.replay(c, id, "ops")).isTrue();
    }
    assertCompletesBy(id, acted.plus(SLACK));
  }

  @Test
  void aCancelledJobSaysWhoCancelledIt() throws SQLException {
    long id = fixtures.enqueue("dropped");
    try (Connection c = db.connect()) {
      assertThat(jobs.cancel(c, id, "alice@ops")).isTrue();
    }

    Reason r = only(explain(id), Reason.CANCELLED);
    assertThat(evidence(r, "by")).isEqualTo("alice@ops");
    assertThat(r.sentence()).contains("alice@ops");
  }

  @Test
  void aDueJobWithNothingInItsWayIsRunnableNowAndTheBlockersCountIt() throws SQLException {
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, started_at, seen_at, listener, mode,"
            + " capsules, heartbeat_ttl_ms) VALUES ('idle-jvm', 'h', now(), now(), 'x', 'notify',"
            + " '[{\"name\":\"main\",\"queues\":[\"ready\"],\"concurrency\":2}]', 30000)");
    long id = fixtures.enqueue("ready");
    fixtures.enqueue("ready", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));

    Reason r = only(explain(id), Reason.RUNNABLE_NOW);
    assertThat(evidence(r, "ahead")).isEqualTo("0");
    assertThat(evidence(r, "free_slots")).isEqualTo("2");
    try (Connection c = db.connect()) {
      var b = jobs.blockers(c, "ready");
      assertThat(b).hasSize(1);
      assertThat(b.get(0).waiting()).isEqualTo(2);
      assertThat(b.get(0).runnableNow()).isEqualTo(1);
      assertThat(b.get(0).blockedBy()).containsExactly(java.util.Map.entry(Reason.DUE_LATER, 1L));
    }
  }

  @Test
  void queueBlockersPartitionTheWaitingJobsByTheirFirstCause() throws SQLException {
    db.update("INSERT INTO pgbus.queue_limit (queue, global_concurrency) VALUES ('mixed', 1)");
    db.update(
        "INSERT INTO pgbus.job (queue, payload, state, attempt, attempted_at, attempted_by,"
            + " lease_expires_at) VALUES ('mixed', '{}', 'running', 1, now(), 'w', now() + interval '1 minute')");
    fixtures.enqueue("mixed", 2);
    fixtures.enqueue("mixed", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    long retry = fixtures.enqueue("mixed");
    db.update(
        "UPDATE pgbus.job SET state = 'retryable', run_at = now() + interval '1 hour' WHERE id = ?",
        retry);
    long upstream = fixtures.enqueue("elsewhere");
    db.update("INSERT INTO pgbus.queue_limit (queue, key_concurrency) VALUES ('keys', 1)");
    db.update(
        "INSERT INTO pgbus.job (queue, payload, state, attempt, attempted_at, attempted_by,"
            + " lease_expires_at, concurrency_key) VALUES ('keys', '{}', 'running', 1, now(), 'w',"
            + " now() + interval '1 minute', 'k')");
    fixtures.enqueue("keys", 2, EnqueueOptions.defaults().withConcurrencyKey("k"));
    fixtures.enqueue("keys", 2, EnqueueOptions.defaults().withConcurrencyKey("j"));
    fixtures.enqueue("keys");
    try (Connection c = db.connect()) {
      jobs.enqueue(c, new NewJob("mixed", "{}", EnqueueOptions.defaults().afterJobs(upstream)));

      var mixed = jobs.blockers(c, "mixed").get(0);
      assertThat(mixed.waiting()).isEqualTo(5);
      assertThat(mixed.runnableNow()).isZero();
      assertThat(mixed.blockedBy())
          .containsExactly(
              java.util.Map.entry(Reason.WAITING_ON_DEPENDENCIES, 1L),
              java.util.Map.entry(Reason.RETRY_BACKOFF, 1L),
              java.util.Map.entry(Reason.DUE_LATER, 1L),
              java.util.Map.entry(Reason.GLOBAL_LIMIT, 2L));

      // Key k runs one job: its two wait; key j may start one of its two; the unkeyed one runs.
      var keys = jobs.blockers(c, "keys").get(0);
      assertThat(keys.waiting()).isEqualTo(5);
      assertThat(keys.runnableNow()).isEqualTo(2);
      assertThat(keys.blockedBy()).containsExactly(java.util.Map.entry(Reason.KEY_LIMIT, 3L));

      assertThat(jobs.blockers(c, null))
          .extracting(QueueBlockers::queue)
          .containsExactly("elsewhere", "keys", "mixed");
    }
  }

  // --- helpers

  private Engine start(String... queues) {
    return start(engines.config().capsule("main", 2, queues), (job, tx) -> Outcome.complete());
  }

  private Engine start(EngineConfig.Builder config) {
    return start(config, (job, tx) -> Outcome.complete());
  }

  private Engine start(EngineConfig.Builder config, JobFunction fn) {
    return engines.start(engines.builder(config.build()).jobs(fn));
  }

  /** An engine whose handler holds the first job of {@code queue} until {@code release}. */
  private Engine startBlocking(EngineConfig.Builder config, String queue, CountDownLatch release) {
    return start(
        config,
        (job, tx) -> {
          if (job.queue().equals(queue)) {
            release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
          }
          return Outcome.complete();
        });
  }

  /**
   * Enqueues a job and waits until it runs, then enqueues a second with the same options; returns
   * the first's id (the second's is the next: the test database has no other enqueuer).
   */
  private long runningThenWaiting(String queue, EnqueueOptions options) {
    long first = fixtures.enqueue(queue, options);
    awaitState(first, "running");
    assertThat(fixtures.enqueue(queue, options)).isEqualTo(first + 1);
    return first;
  }

  private static void releaseAndAssertRuns(CountDownLatch release, long id) {
    Instant acted = Instant.now();
    release.countDown();
    assertCompletesBy(id, acted.plus(SLACK));
  }

  private Explanation explain(long id) {
    try (Connection c = db.connect()) {
      return jobs.explain(c, id).orElseThrow();
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static Reason first(Explanation e) {
    return e.reasons().get(0);
  }

  /** The explanation's one reason besides batch membership, which must have {@code code}. */
  private static Reason only(Explanation e, String code) {
    List<Reason> blocking =
        e.reasons().stream().filter(r -> !r.code().equals(Reason.BATCH_CALLBACK_WAITING)).toList();
    assertThat(blocking).as("reasons of job %d: %s", e.job(), e.reasons()).hasSize(1);
    assertThat(blocking.get(0).code()).as("reasons: %s", e.reasons()).isEqualTo(code);
    return blocking.get(0);
  }

  private static Reason reason(Explanation e, String code) {
    Reason r = reasonOrNull(e, code);
    assertThat(r).as("a reason %s among %s", code, e.reasons()).isNotNull();
    return r;
  }

  private static Reason reasonOrNull(Explanation e, String code) {
    return e.reasons().stream().filter(r -> r.code().equals(code)).findFirst().orElse(null);
  }

  /** The evidence at a path ({@code readers,0,slots}) as text; JSON for objects and arrays. */
  private static String evidence(Reason r, String path) {
    try (Connection c = db.helperConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT ?::jsonb #>> pg_catalog.string_to_array(?, ',')")) {
      ps.setString(1, r.evidence());
      ps.setString(2, path);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private static void awaitState(long id, String state) {
    Await.until("job " + id + " to be " + state, WAIT, () -> db.job(id).state(), state::equals);
  }

  /** The job completes, and no later than {@code by}. */
  private static void assertCompletesBy(long id, Instant by) {
    awaitState(id, "completed");
    assertThat(db.job(id).finalizedAt()).as("job %d finished by its ETA", id).isBeforeOrEqualTo(by);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.HostilePublic;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No pgbus statement resolves a name through the caller's search_path. A role that may create
 * objects in {@code public} (anyone, up to PostgreSQL 14) plants look-alikes there; pgbus runs on
 * connections whose search_path is {@code "$user", public}, often as a superuser.
 *
 * <p>The look-alikes are the audit of every function and operator call in V1..V5 and in the Java
 * SQL that pg_catalog does not match exactly: polymorphic and VARIADIC functions, arguments that
 * need an implicit cast (pgjdbc sends strings as varchar, longs as bigint), and enum comparisons
 * with a literal (pg_catalog has only anyenum = anyenum). Each records itself in {@code
 * public.trap_log} and then does what the real one does, so the lifecycle still runs when one is
 * hit and the log names every hit. Operators over pgbus's own types (queue_name, job_state) are
 * planted too, although only a role with USAGE on schema pgbus could declare them.
 */
class SearchPathHijackTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db());

  /** Functions that are written to resolve nothing through the path instead of pinning it. */
  static final Set<String> PATH_INDEPENDENT =
      Set.of(
          "queue",
          "channel",
          "notify",
          "enqueue",
          "enqueue_job",
          "enqueue_many",
          "check_payload",
          "check_run_at",
          "check_trace",
          "check_concurrency_key",
          "wake_first",
          "due_hint");

  private final JobStore store = new JobStore();
  private final Set<Long> snoozedOnce = ConcurrentHashMap.newKeySet();

  /**
   * The database the cases run on: {@link SearchPathHijackInSchemaTest} runs them all in a schema
   * other than pgbus.
   */
  TestDatabase db() {
    return db;
  }

  @BeforeAll
  static void plantLookAlikesInPublic() throws SQLException {
    // TestDatabase plants them unless told not to (-Dpgbus.test.hostile-public=false); this class
    // always runs against them.
    if (!HostilePublic.enabled()) {
      try (Connection c = db.connect()) {
        HostilePublic.plant(c);
      }
    }
  }

  @BeforeEach
  void forgetEarlierHits() {
    db().update("TRUNCATE public.trap_log");
    db().queryLong("SELECT pg_catalog.setval('public.trap_hits', 1, false)");
  }

  @Test
  void aReadinessProbeOfALimitedQueueRunsNoLookAlikeFromPublic() throws Exception {
    Engine engine = engines.start(engines.config().capsule("main", 1, "limited").build(), null);
    try (Connection c = db().connect();
        Statement st = c.createStatement()) {
      // Set after the start: an engine writes the limits it is configured with when it starts.
      st.execute(
          "SELECT pgbus.queue_limit_set('limited', global_concurrency => 2, rate_limit => 10,"
              + " rate_window => interval '1 second')");
      // What /health/ready and the admin API read for a limited queue.
      assertThat(engine.queueLimits(c)).isNotEmpty();
    }
    assertThat(trapped()).as("look-alikes in public that the limit status ran").isEmpty();
  }

  @Test
  void anEngineStopRunsNoLookAlikeFromPublic() throws Exception {
    Engine engine = engines.start(engines.config().capsule("main", 1, "stopping").build(), null);
    TestEngines.awaitDelivering(engine);
    engine.stop();
    assertThat(trapped()).as("look-alikes in public that the engine's stop ran").isEmpty();
  }

  @Test
  void aQueuesHistoryRunsNoLookAlikeFromPublic() throws Exception {
    Engine engine = engines.start(engines.config().capsule("main", 1, "audited").build(), null);
    try (Connection c = db().connect()) {
      engine.jobs().pause(c, "audited");
      engine.jobs().resume(c, "audited");
      long id =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "audited", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))));
      engine.jobs().cancel(c, id);
      assertThat(engine.jobs().history(c, "audited", 10)).isNotEmpty();
      assertThat(engine.jobs().history(c, id)).isNotEmpty();
    }
    assertThat(trapped()).as("look-alikes in public that JobQueue.history ran").isEmpty();
  }

  @Test
  void theWholeLifecycleRunsNoLookAlikeFromPublic() throws Exception {
    EngineConfig config =
        engines.config().capsule("main", 4, "ok", "dies", "snoozes", "cancels").build();
    Engine engine = engines.start(config, this::handle);
    TestEngines.awaitDelivering(engine);
    Await.until("the maintenance leader", Duration.ofSeconds(10), engine::leader);

    long ok;
    long dies;
    long snoozes;
    long cancels;
    long waiting;
    try (Connection c = db().connect()) {
      ok = engine.jobs().enqueue(c, NewJob.of("ok", "{\"n\":1}"));
      engine
          .jobs()
          .enqueueIfAbsent(
              c, new NewJob("ok", "{}", EnqueueOptions.defaults().withUniqueKey("once")));
      engine
          .jobs()
          .enqueueIfAbsent(
              c, new NewJob("ok", "{}", EnqueueOptions.defaults().withUniqueKey("once")));
      engine.jobs().enqueueAll(c, List.of(NewJob.of("ok", "{}"), NewJob.of("ok", "[1]")));
      engine
          .jobs()
          .enqueueAll(
              c,
              List.of(
                  new NewJob("ok", "{}", EnqueueOptions.defaults().withUniqueKey("batch")),
                  new NewJob(
                      "ok", "{}", EnqueueOptions.defaults().withDelay(Duration.ofMillis(5)))));
      dies =
          engine
              .jobs()
              .enqueue(c, new NewJob("dies", "{}", EnqueueOptions.defaults().withMaxAttempts(1)));
      snoozes = engine.jobs().enqueue(c, NewJob.of("snoozes", "{}"));
      cancels = engine.jobs().enqueue(c, NewJob.of("cancels", "{}"));
      waiting =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob("ok", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))));
    }
    awaitState(ok, "completed");
    awaitState(dies, "dead");
    awaitState(snoozes, "completed");
    awaitState(cancels, "cancelled");

    try (Connection c = db().connect()) {
      assertThat(engine.jobs().cancel(c, waiting)).isTrue();
      assertThat(engine.jobs().replay(c, dies)).isTrue();
      assertThat(engine.jobs().pause(c, "ok")).isTrue();
      assertThat(engine.jobs().isPaused(c, "ok")).isTrue();
      assertThat(engine.jobs().pausedQueues(c)).containsExactly("ok");
      store.jobQueueHeads(c, List.of("ok", "dies"));
      store.jobNextDue(c, List.of("ok", "dies"));
      assertThat(engine.jobs().resume(c, "ok")).isTrue();
    }
    awaitState(dies, "completed");

    // What the engine does only now and then, or only on other paths: driven by hand.
    try (Connection c = db().connect()) {
      TraceContext trace =
          new TraceContext("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "k=v");
      store.jobInsertIfAbsent(c, NewJob.of("traced", "{}"), trace);
      store.jobInsertMany(c, List.of(NewJob.of("traced", "{}")), trace);
      assertThat(store.jobClaim(c, List.of("traced"), 2, "me", Duration.ofMinutes(1)))
          .extracting(ClaimedJob::trace)
          .containsExactly(trace, trace);
      long a = engine.jobs().enqueue(c, NewJob.of("manual", "{}"));
      engine.jobs().enqueue(c, NewJob.of("manual", "{}"));
      engine.jobs().enqueue(c, NewJob.of("manual", "{}"));
      List<ClaimedJob> held = store.jobClaim(c, List.of("manual"), 3, "me", Duration.ofMinutes(1));
      assertThat(held).hasSize(3);
      store.jobExtendLeases(c, held, Duration.ofMinutes(2));
      assertThat(store.jobRelease(c, held.get(0))).isTrue();
      store.jobSnooze(c, held.get(1), Duration.ZERO);
      store.jobFail(c, held.get(2), "boom", Duration.ZERO);
      held = store.jobClaim(c, List.of("manual"), 3, "me", Duration.ofMinutes(1));
      store.jobCompleteMany(c, held.subList(0, 1));
      store.jobCompleteMany(c, held.subList(1, 2), true);
      store.jobComplete(c, held.get(2), true);
      long b = engine.jobs().enqueue(c, NewJob.of("manual", "{}"));
      held = store.jobClaim(c, List.of("manual"), 1, "me", Duration.ofMinutes(1));
      store.jobCancelRunning(c, held.get(0), "no");
      engine.jobs().enqueue(c, NewJob.of("manual", "{}"));
      store.jobClaim(c, List.of("manual"), 1, "me", Duration.ofMillis(1));
      db().update(
              "UPDATE pgbus.job SET lease_expires_at = now() - interval '1 minute' WHERE state OPERATOR(pg_catalog.=) 'running'");
      assertThat(store.jobRescueExpired(c, 10)).isNotEmpty();
      db().update(
              "UPDATE pgbus.job SET finalized_at = now() - interval '1 day' WHERE id IN (?, ?)",
              a,
              b);
      store.jobPrune(c, "completed", Duration.ofHours(1), 10);
      store.jobPrune(c, "cancelled", Duration.ofHours(1), 10);

      var leaders = new LeaderStore();
      leaders.leaderLease(c, Elector.MAINTENANCE);
      leaders.leaderAttemptElect(c, "other", "me", Duration.ofSeconds(5));
      leaders.leaderRenew(c, "other", "me", Duration.ofSeconds(5));
      leaders.leaderResign(c, "other", "me");

      var cron =
          new ScheduleEnqueuer(
              List.of(CronJob.of("nightly", "0 3 * * *", "ok")),
              store,
              new JdbcTransactions(db().dataSource()),
              ScheduleEnqueuer.MAX_WAIT);
      Instant day = Instant.parse("2026-01-05T03:00:00Z");
      cron.tick(c, day.minusSeconds(60));
      cron.tick(c, day);
      var book = new ScheduleBook(engine.jobs(), 65536);
      book.create(c, io.pgbus.ScheduleDefinition.of("api", "@hourly", "ok"), null);
      book.update(c, io.pgbus.ScheduleDefinition.of("api", "@daily", "ok").catchingUp(2), "me");
      book.pause(c, "api", null);
      book.resume(c, "api", null);
      book.trigger(c, "api", null);
      book.list(c, null, 10);
      book.history(c, "api", 10);
      book.delete(c, "api", null);

      Doctor.examine(engine, db().dataSource(), 10, "pool.key");
      Schema.installedVersion(c);
    }

    // The SQL API, as an operator or another application calls it.
    try (Connection c = db().connect();
        Statement st = c.createStatement()) {
      // A max-wait (V56): every enqueue below reads it and writes a deadline.
      st.execute("SELECT pgbus.queue_max_wait_set('sql', interval '1 hour')");
      st.execute("SELECT pgbus.enqueue('sql', '{}')");
      st.execute("SELECT pgbus.enqueue('sql', '{}', unique_key => 'k')");
      st.execute("SELECT pgbus.enqueue('sql', '{}', run_at => now() + interval '1 hour')");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql', 'sql'], ARRAY['{}', '[]']::jsonb[],"
              + " ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[25, 25])");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql'], ARRAY['{}']::jsonb[],"
              + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[25], ARRAY['u'])");
      // With a trace context (V6): checked by pgbus.check_trace and stored.
      st.execute(
          "SELECT pgbus.enqueue('sql', '{}', trace_parent =>"
              + " '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', trace_state => 'k=v')");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql'], ARRAY['{}']::jsonb[],"
              + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[25], ARRAY['t'],"
              + " ARRAY['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'], ARRAY['k=v'])");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql'], ARRAY['{}']::jsonb[],"
              + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[25], NULL,"
              + " ARRAY['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'])");
      // With a concurrency key (V14): checked, the queue gets its limit row, the claim counts it.
      st.execute("SELECT pgbus.enqueue('sql', '{}', concurrency_key => 'c')");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql'], ARRAY['{}']::jsonb[],"
              + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[25], NULL, NULL, NULL, ARRAY['c'])");
      // An encrypting queue (V53): a sealed payload is taken, one or in a batch, a plain one is
      // refused; a batch's callback of a plain payload is let by.
      String sealed = "'{\"pgbus.enc\": \"pgbus.enc.v1:k1:AAAAAAAAAAAAAAAA:AAAAAAAA\"}'";
      st.execute("SELECT pgbus.queue_encrypt_set('sealed', true)");
      st.execute("SELECT pgbus.enqueue('sealed', " + sealed + ")");
      st.execute("SELECT pgbus.enqueue('sealed', " + sealed + ", unique_key => 'k')");
      st.execute(
          "SELECT * FROM pgbus.enqueue_many(ARRAY['sql', 'sealed'], ARRAY['{}', "
              + sealed
              + "]::jsonb[], ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[25, 25])");
      assertThatThrownBy(() -> st.execute("SELECT pgbus.enqueue('sealed', '{}')"))
          .hasMessageContaining("queue sealed encrypts its payloads");
      assertThatThrownBy(
              () ->
                  st.execute(
                      "SELECT * FROM pgbus.enqueue_many(ARRAY['sealed'], ARRAY['{}']::jsonb[],"
                          + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[25])"))
          .hasMessageContaining("queue sealed encrypts its payloads");
      st.execute("SELECT pgbus.queue_encrypt_set('sealed', false)");
      st.execute("SELECT pgbus.queue_limit_set('sql', global_concurrency => 3)");
      st.execute("SELECT * FROM pgbus.claim(ARRAY['sql'], 10, 'me', interval '1 minute')");
      st.execute("SELECT pgbus.queue_limit_clear('sql')");
      st.execute("SELECT pgbus.pause('sql')");
      st.execute("SELECT pgbus.resume('sql')");
      st.execute("SELECT * FROM pgbus.claim(ARRAY['sql'], 10, 'me', interval '1 minute')");
      st.execute("SELECT pgbus.listen(ARRAY['pgbus_sql'])");
      st.execute("SELECT pgbus.queue_max_wait_set('sql', NULL)");
    }

    assertThat(trapped()).as("look-alikes in public that pgbus ran").isEmpty();
  }

  @Test
  void aWorkflowsBranchesCancelAndRetryRunNoLookAlikeFromPublic() throws Exception {
    Engine engine =
        engines.start(engines.config().capsule("main", 2, "ok", "dies").build(), this::handle);
    TestEngines.awaitDelivering(engine);
    io.pgbus.Workflow spec =
        io.pgbus.Workflow.named("hijack")
            .node("a", "dies", "{}", EnqueueOptions.defaults().withMaxAttempts(1))
            .node("b", "ok", "{}")
            .after("a")
            .node("c", "ok", "{}")
            .onFailure("a")
            .node("d", "ok", "{}")
            .onResult("c", "$.ok == true")
            .node("e", "ok", "{\"fanout\":1}");
    io.pgbus.EnqueuedWorkflow w;
    try (Connection c = db().connect()) {
      List<NewJob> nodes = new ArrayList<>();
      for (io.pgbus.Workflow.Node n : spec.nodes()) {
        nodes.add(new NewJob(n.queue(), (String) n.payload(), n.options()));
      }
      w = engine.jobs().enqueueWorkflow(c, spec, nodes);
      engine.jobs().enqueue(c, NewJob.of("ok", "{}").inWorkflow(w.workflowId()));
    }
    awaitState(w.jobId("d"), "cancelled");
    awaitState(w.jobId("b"), "cancelled");
    try (Connection c = db().connect()) {
      engine.jobs().retryWorkflow(c, w.workflowId(), "hijack");
      engine.jobs().cancelWorkflow(c, w.workflowId(), "hijack");
      assertThat(new WorkflowGraph(db().dataSource()).graph(w.workflowId()).nodes()).hasSize(6);
    }
    try (Connection c = db().connect();
        Statement st = c.createStatement()) {
      st.execute(
          "SELECT pgbus.enqueue_workflow('sql', '[{\"node\":\"x\",\"queue\":\"ok\",\"payload\":{}},"
              + "{\"node\":\"y\",\"queue\":\"ok\",\"payload\":{},\"after\":[{\"node\":\"x\","
              + "\"kind\":\"result\",\"predicate\":\"$.n > 1\"}]}]')");
    }
    assertThat(trapped()).as("look-alikes in public that a workflow ran").isEmpty();
  }

  @Test
  void everyPgbusFunctionPinsItsSearchPathOrResolvesNothingThroughIt() {
    List<String> unpinned = new ArrayList<>();
    try (Connection c = db().connect();
        PreparedStatement ps =
            c.prepareStatement(
                """
                SELECT p.proname, p.oid::regprocedure::text
                  FROM pg_catalog.pg_proc p
                 WHERE p.pronamespace = 'pgbus'::regnamespace
                   AND NOT coalesce(p.proconfig::text[] && ARRAY['search_path=pg_catalog, pgbus, pg_temp'], false)
                """);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        if (!PATH_INDEPENDENT.contains(rs.getString(1))) {
          unpinned.add(rs.getString(2));
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    assertThat(unpinned)
        .as(
            "functions without SET search_path = pg_catalog, pgbus, pg_temp (and not on the"
                + " path-independent enqueue path, see R__enqueue.sql)")
        .isEmpty();
  }

  private Outcome handle(RunningJob job, Connection tx) {
    return switch (job.queue()) {
      case "dies" -> {
        if (job.attempt() == 1) {
          throw new IllegalStateException("dies on its first attempt");
        }
        yield Outcome.complete();
      }
      case "snoozes" ->
          snoozedOnce.add(job.id()) ? Outcome.snooze(Duration.ofMillis(1)) : Outcome.complete();
      case "cancels" -> Outcome.cancel("not wanted");
      default -> Outcome.complete();
    };
  }

  private void awaitState(long id, String state) {
    Await.until(
        "job " + id + " to be " + state,
        Duration.ofSeconds(20),
        () -> db().job(id).state(),
        state::equals);
  }

  private List<String> trapped() {
    try (Connection c = db().helperConnection()) {
      return HostilePublic.hits(c);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}

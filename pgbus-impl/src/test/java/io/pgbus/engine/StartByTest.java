package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.admin.Explanation;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Start-by deadlines (issue #31): a job not claimed by its deadline never runs, whatever the leader
 * has done yet, and ends cancelled as expired; one claimed before it runs as any other; bad
 * deadlines are refused on the Java and the SQL path, naming the value and the fix.
 */
class StartByTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach(
              "pgbus.job",
              "pgbus.queue_pause",
              "pgbus.audit",
              "pgbus.leader",
              "pgbus.queue_max_wait");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);

  private final Set<Long> ran = ConcurrentHashMap.newKeySet();
  private final JobStore store = new JobStore();

  @Test
  void aDeadlineThatPassesWhileTheQueueIsPausedEndsTheJobExpiredAndItNeverRuns() throws Exception {
    // Paused and enqueued before the leader starts: its expiry's first read finds the deadline
    // ahead and waits exactly until it. (A deadline enqueued later on another JVM is found by the
    // leader's next lease renewal: Maintainer.ExpireTask.)
    long id;
    try (Connection c = db.connect()) {
      assertThat(new Jobs(engines.config().build()).pause(c, "paused_sb")).isTrue();
      id =
          new Jobs(engines.config().build())
              .enqueue(
                  c,
                  new NewJob(
                      "paused_sb",
                      "{}",
                      EnqueueOptions.defaults().startBy(Instant.now().plusMillis(3000))));
    }
    Engine engine = engine("paused_sb");
    assertThat(db.job(id).state()).isEqualTo("available");

    Await.until(
        "the leader to expire the job", WAIT, () -> db.job(id).state(), "cancelled"::equals);
    // Counted after the expiry's commit, which the state above may show first.
    Await.until("the expiry counted", WAIT, () -> engine.status().expired() == 1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE id = ? AND start_by IS NOT NULL"
                    + " AND errors->0->>'error' LIKE 'expired: not started by %'",
                id))
        .isEqualTo(1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE job_id = ? AND action = 'cancel'"
                    + " AND actor = 'pgbus' AND (detail->>'expired')::boolean",
                id))
        .isEqualTo(1);
    try (Connection c = db.connect()) {
      Explanation e = engine.jobs().explain(c, id).orElseThrow();
      assertThat(e.reasons()).extracting(r -> r.code()).containsExactly("expired");
      assertThat(engine.jobs().resume(c, "paused_sb")).isTrue();
    }
    // Resumed, the queue runs a job enqueued now; the expired one stays cancelled, never run.
    long after;
    try (Connection c = db.connect()) {
      after = engine.jobs().enqueue(c, NewJob.of("paused_sb", "{}"));
    }
    Await.until("the next job to run", WAIT, () -> ran.contains(after));
    assertThat(ran).doesNotContain(id);
    assertThat(db.job(id).state()).isEqualTo("cancelled");
  }

  @Test
  void aDeadlineEnqueuedWhileTheLeaderIdlesIsSeenAtItsNextLeaseRenewal() throws Exception {
    Engine engine = engine("idle_sb");
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().pause(c, "later_sb")).isTrue();
    }
    // The expiry's own first read is long done: from here on only the renewals (every 500 ms
    // with this TTL) tell it of a deadline. Before they did, its next read came a minute later.
    Thread.sleep(1_500);
    long id;
    try (Connection c = db.connect()) {
      id =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "later_sb",
                      "{}",
                      EnqueueOptions.defaults().startBy(Instant.now().plusMillis(500))));
    }
    Await.until(
        "the leader to expire the job",
        Duration.ofSeconds(8),
        () -> db.job(id).state(),
        "cancelled"::equals);
    // Counted after the expiry's commit, which the state above may show first.
    Await.until("the expiry counted", WAIT, () -> engine.status().expired() == 1);
  }

  @Test
  void theClaimRefusesALateJobBeforeAnyLeaderCancelsIt() throws Exception {
    Jobs jobs = new Jobs(EngineConfig.builder().build());
    long id;
    try (Connection c = db.connect()) {
      id =
          jobs.enqueue(
              c,
              new NewJob(
                  "late_sb",
                  "{}",
                  EnqueueOptions.defaults().startBy(Instant.now().plusSeconds(60))));
    }
    // The deadline passes (moved back rather than waited for); no engine, no leader runs.
    db.update("UPDATE pgbus.job SET start_by = now() - interval '1 millisecond' WHERE id = ?", id);
    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, List.of("late_sb"), 10, "w", Duration.ofMinutes(1))).isEmpty();
      assertThat(jobs.explain(c, id).orElseThrow().reasons())
          .extracting(r -> r.code())
          .contains("expired");
      // The leader's expiry, when it comes, makes it final.
      c.setAutoCommit(false);
      assertThat(store.jobExpire(c, 100)).containsEntry("late_sb", 1L);
      c.commit();
    }
    assertThat(db.job(id).state()).isEqualTo("cancelled");
  }

  @Test
  void aJobClaimedBeforeItsDeadlineRunsNormally() throws Exception {
    Engine engine = engine("ontime_sb");
    long id;
    try (Connection c = db.connect()) {
      id =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "ontime_sb",
                      "{}",
                      EnqueueOptions.defaults().startBy(Instant.now().plusSeconds(30))));
    }
    Await.until("the job to run", WAIT, () -> ran.contains(id));
    Await.until("the job to complete", WAIT, () -> db.job(id).state(), "completed"::equals);
    assertThat(engine.status().expired()).isZero();
  }

  @Test
  void aQueuesMaxWaitGivesItsJobsADeadlineCountedFromWhenTheyAreDue() throws Exception {
    Jobs jobs =
        new Jobs(
            EngineConfig.builder()
                .queuePolicy(
                    new QueuePolicy("mw_sb", null, null, null, null, Duration.ofMinutes(5)))
                .build());
    long id;
    try (Connection c = db.connect()) {
      id =
          jobs.enqueue(
              c,
              new NewJob("mw_sb", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))));
    }
    assertThat(
            db.queryLong(
                "SELECT extract(epoch FROM start_by - run_at)::bigint FROM pgbus.job WHERE id = ?",
                id))
        .isBetween(299L, 301L);
    assertThatThrownBy(
            () -> new QueuePolicy("mw_sb", null, null, null, null, Duration.ofSeconds(-5)))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.queue.mw_sb.max-wait=-5s is invalid")
        .hasMessageContaining("use a positive duration");
    assertThatThrownBy(() -> new QueuePolicy("mw_sb", null, null, null, null, Duration.ZERO))
        .hasMessageContaining("pgbus.queue.mw_sb.max-wait=");
  }

  @Test
  void aQueuesMaxWaitReachesEnqueueAllBatchMembersAndScheduleRuns() throws Exception {
    Jobs jobs =
        new Jobs(
            EngineConfig.builder()
                .queuePolicy(
                    new QueuePolicy("mw_bulk", null, null, null, null, Duration.ofMinutes(5)))
                .build());
    Instant own = Instant.now().plusSeconds(3600);
    List<Long> ids;
    long holder;
    try (Connection c = db.connect()) {
      holder =
          jobs.enqueue(
              c,
              new NewJob(
                  "mw_bulk", "{}", EnqueueOptions.defaults().withUniqueKey("held").startBy(own)));
      ids =
          jobs.enqueueAll(
              c,
              List.of(
                  NewJob.of("mw_bulk", "{}"),
                  new NewJob(
                      "mw_bulk", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))),
                  // Its own deadline wins over the queue's, in a bulk enqueue too.
                  new NewJob("mw_bulk", "{}", EnqueueOptions.defaults().startBy(own)),
                  // A duplicate: the holder keeps its deadline.
                  new NewJob("mw_bulk", "{}", EnqueueOptions.defaults().withUniqueKey("held")),
                  NewJob.of("no_mw_bulk", "{}")));
    }
    assertThat(ids.get(3)).isEqualTo(holder);
    assertThat(maxWaitAfterDue(ids.get(0))).isBetween(299L, 301L);
    assertThat(maxWaitAfterDue(ids.get(1))).isBetween(299L, 301L);
    assertThat(startBy(ids.get(2))).isEqualTo(startBy(holder)).isNotNull();
    assertThat(startBy(ids.get(4))).as("a queue without max-wait").isNull();

    io.pgbus.EnqueuedBatch batch;
    try (Connection c = db.connect()) {
      batch =
          jobs.enqueueBatch(
              c,
              List.of(
                  NewJob.of("mw_bulk", "{}"),
                  new NewJob("mw_bulk", "{}", EnqueueOptions.defaults().startBy(own))),
              NewJob.of("mw_bulk", "{}"));
    }
    assertThat(maxWaitAfterDue(batch.jobIds().get(0))).isBetween(299L, 301L);
    assertThat(startBy(batch.jobIds().get(1))).isEqualTo(startBy(holder));

    // A schedule's run, as the leader enqueues it: counted from the run's time, or from now for
    // a run whose time is past (this one, ten minutes ago).
    ScheduleEnqueuer cron =
        new ScheduleEnqueuer(
            List.of(CronJob.of("mw_cron", "* * * * *", "mw_bulk")),
            store,
            new JdbcTransactions(db.dataSource()),
            ScheduleEnqueuer.MAX_WAIT,
            jobs::scheduleRun);
    Instant run =
        Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MINUTES).minusSeconds(600);
    try (Connection c = db.connect()) {
      cron.tick(c, run.minusSeconds(1));
      assertThat(cron.tick(c, run.plusSeconds(1)).enqueued()).isEqualTo(1);
    }
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE queue = 'mw_bulk' AND unique_key LIKE"
                    + " '%mw_cron%' AND start_by BETWEEN now() + interval '299 seconds'"
                    + " AND now() + interval '301 seconds'"))
        .as("a late run's wait counted from now")
        .isEqualTo(1);
  }

  @Test
  void theDatabaseKnowsAQueuesMaxWaitSoEverySqlEnqueueGivesItsJobsADeadline() throws Exception {
    EngineConfig config =
        EngineConfig.builder()
            .capsule("main", 1, "mw_sql", "mw_none")
            .queuePolicy(new QueuePolicy("mw_sql", null, null, null, null, Duration.ofMinutes(5)))
            .queuePolicy(
                new QueuePolicy("mw_elsewhere", null, null, null, null, Duration.ofMinutes(7)))
            .build();
    QueueMaxWait.publish(config, db.dataSource());
    assertThat(
            db.queryText(
                "SELECT string_agg(queue::text || '=' || max_wait, ',' ORDER BY queue)"
                    + " FROM pgbus.queue_max_wait"))
        .as("the queues it reads and those it configures")
        .isEqualTo("mw_elsewhere=00:07:00,mw_sql=00:05:00");

    long plain = db.queryLong("SELECT pgbus.enqueue('mw_sql', '{}')");
    long later =
        db.queryLong("SELECT pgbus.enqueue('mw_sql', '{}', run_at => now() + interval '1 hour')");
    long past =
        db.queryLong("SELECT pgbus.enqueue('mw_sql', '{}', run_at => now() - interval '1 hour')");
    long keyed = db.queryLong("SELECT pgbus.enqueue('mw_sql', '{}', unique_key => 'k1')");
    long own =
        db.queryLong("SELECT pgbus.enqueue_start_by('mw_sql', '{}', now() + interval '2 minutes')");
    long none = db.queryLong("SELECT pgbus.enqueue('mw_none', '{}')");
    assertThat(secondsFromNowToDeadline(plain)).isBetween(299L, 300L);
    assertThat(maxWaitAfterDue(later)).isEqualTo(300L);
    assertThat(secondsFromNowToDeadline(past))
        .as("a past run_at counts from now")
        .isBetween(299L, 300L);
    assertThat(secondsFromNowToDeadline(keyed)).isBetween(299L, 300L);
    assertThat(secondsFromNowToDeadline(own)).as("its own wins").isBetween(119L, 120L);
    assertThat(startBy(none)).isNull();

    List<Long> many =
        db.queryLongs(
            "SELECT * FROM pgbus.enqueue_many(ARRAY['mw_sql', 'mw_none'], ARRAY['{}', '{}']::jsonb[],"
                + " ARRAY[now() + interval '1 hour', NULL], ARRAY[0, 0], ARRAY[25, 25])");
    assertThat(maxWaitAfterDue(many.get(0))).isEqualTo(300L);
    assertThat(startBy(many.get(1))).isNull();
    List<Long> manyKeyed =
        db.queryLongs(
            "SELECT * FROM pgbus.enqueue_many(ARRAY['mw_sql'], ARRAY['{}']::jsonb[], ARRAY[NULL::timestamptz],"
                + " ARRAY[0], ARRAY[25], ARRAY['k2'])");
    assertThat(secondsFromNowToDeadline(manyKeyed.get(0))).isBetween(299L, 300L);

    List<Long> members =
        db.queryLongs(
            "SELECT unnest(b.job_ids) FROM pgbus.enqueue_batch(ARRAY['mw_sql', 'mw_none'],"
                + " ARRAY['{}', '{}']::jsonb[], ARRAY[0, 0], ARRAY[25, 25], 'mw_sql', '{}') b");
    assertThat(secondsFromNowToDeadline(members.get(0))).isBetween(299L, 300L);
    assertThat(startBy(members.get(1))).isNull();

    long after =
        db.queryLong("SELECT id FROM pgbus.enqueue_after('mw_sql', '{}', ARRAY[?::bigint])", later);
    assertThat(secondsFromNowToDeadline(after))
        .as("due when its dependency is done: counted from the enqueue")
        .isBetween(299L, 300L);

    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT pgbus.queue_max_wait_set('mw_sql', interval '-5 seconds')::int"))
        .hasStackTraceContaining("max_wait -00:00:05 for queue mw_sql is invalid")
        .hasStackTraceContaining("use 1 millisecond to 36500 days");

    // A newer build's window stays; an engine of this build that configures none for a queue it
    // reads removes the window.
    db.update("UPDATE pgbus.queue_max_wait SET build = '999.0.0' WHERE queue = 'mw_elsewhere'");
    QueueMaxWait.publish(
        EngineConfig.builder().capsule("main", 1, "mw_sql", "mw_elsewhere").build(),
        db.dataSource());
    assertThat(
            db.queryText(
                "SELECT string_agg(queue::text || '=' || max_wait, ',' ORDER BY queue)"
                    + " FROM pgbus.queue_max_wait"))
        .isEqualTo("mw_elsewhere=00:07:00");
    assertThat(startBy(db.queryLong("SELECT pgbus.enqueue('mw_sql', '{}')"))).isNull();
  }

  @Test
  void aMaxWaitSetOrClearedBySqlTakesEffectAtTheNextEnqueueOfTheSameSession() throws Exception {
    try (Connection c = db.connect()) {
      // One session throughout, its enqueue statement prepared on the server: what it cached
      // before a change must not hide the change (the list is read from pgbus.setting, V57).
      c.unwrap(org.postgresql.PGConnection.class).setPrepareThreshold(1);
      java.util.function.LongSupplier enqueue =
          () -> {
            try (var ps = c.prepareStatement("SELECT pgbus.enqueue('mw_set', '{}')");
                var rs = ps.executeQuery()) {
              rs.next();
              return rs.getLong(1);
            } catch (java.sql.SQLException e) {
              throw new IllegalStateException(e);
            }
          };
      assertThat(startBy(enqueue.getAsLong())).isNull();
      assertThat(startBy(enqueue.getAsLong())).isNull();
      assertThat(db.queryText("SELECT max_wait_queues::text FROM pgbus.setting")).isNull();

      db.queryLong("SELECT pgbus.queue_max_wait_set('mw_set', interval '3 minutes')::int");
      assertThat(db.queryText("SELECT max_wait_queues::text FROM pgbus.setting"))
          .isEqualTo("{mw_set}");
      assertThat(secondsFromNowToDeadline(enqueue.getAsLong())).isBetween(179L, 180L);

      db.queryLong("SELECT pgbus.queue_max_wait_set('mw_set', interval '4 minutes')::int");
      assertThat(secondsFromNowToDeadline(enqueue.getAsLong())).isBetween(239L, 240L);

      // Plain SQL on the table keeps the list too, whoever writes it.
      db.update("INSERT INTO pgbus.queue_max_wait (queue, max_wait) VALUES ('mw_other', '1 hour')");
      assertThat(db.queryText("SELECT max_wait_queues::text FROM pgbus.setting"))
          .isEqualTo("{mw_other,mw_set}");

      db.queryLong("SELECT pgbus.queue_max_wait_set('mw_set', NULL)::int");
      assertThat(db.queryText("SELECT max_wait_queues::text FROM pgbus.setting"))
          .isEqualTo("{mw_other}");
      assertThat(startBy(enqueue.getAsLong())).as("cleared: no deadline").isNull();

      db.update("TRUNCATE pgbus.queue_max_wait");
      assertThat(db.queryText("SELECT max_wait_queues::text FROM pgbus.setting")).isNull();
    }
  }

  private static long secondsFromNowToDeadline(long id) {
    return db.queryLong(
        "SELECT extract(epoch FROM start_by - now())::bigint FROM pgbus.job WHERE id = ?", id);
  }

  /** Seconds from when the job is due (its run_at) to its deadline. */
  private static long maxWaitAfterDue(long id) {
    return db.queryLong(
        "SELECT extract(epoch FROM start_by - run_at)::bigint FROM pgbus.job WHERE id = ?", id);
  }

  private static String startBy(long id) {
    return db.queryText("SELECT start_by::text FROM pgbus.job WHERE id = ?", id);
  }

  @Test
  void aDeadlineInThePastIsRefusedOnTheJavaAndTheSqlPathNamingTheValue() throws Exception {
    Jobs jobs = new Jobs(EngineConfig.builder().build());
    Instant past = Instant.parse("2020-01-01T00:00:00Z");
    try (Connection c = db.connect()) {
      assertThatThrownBy(
              () ->
                  jobs.enqueue(
                      c, new NewJob("bad_sb", "{}", EnqueueOptions.defaults().startBy(past))))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("startBy 2020-01-01T00:00:00Z for queue 'bad_sb' is not after now")
          .hasMessageContaining("give a deadline in the future");
      Instant soon = Instant.now().plusSeconds(60);
      assertThatThrownBy(
              () ->
                  jobs.enqueue(
                      c,
                      new NewJob(
                          "bad_sb",
                          "{}",
                          EnqueueOptions.defaults().withRunAt(soon.plusSeconds(60)).startBy(soon))))
          .hasMessageContaining("is not after the job's due time")
          .hasMessageContaining("it could never start");
      assertThatThrownBy(
              () ->
                  jobs.enqueueAll(
                      c,
                      List.of(
                          NewJob.of("bad_sb", "{}"),
                          new NewJob("bad_sb", "{}", EnqueueOptions.defaults().startBy(past)))))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("startBy 2020-01-01T00:00:00Z for queue 'bad_sb' is not after now");
      assertThatThrownBy(
              () ->
                  jobs.enqueueBatch(
                      c,
                      List.of(NewJob.of("bad_sb", "{}")),
                      new NewJob("bad_sb", "{}", EnqueueOptions.defaults().startBy(soon))))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("a batch's callback does not take startBy")
          .hasMessageContaining("give the members deadlines");
    }
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT pgbus.enqueue_start_by('bad_sb', '{}', '2020-01-01T00:00:00Z')"))
        .hasStackTraceContaining("start_by 2020-01-01 00:00:00+00 is not after now")
        .hasStackTraceContaining("give a deadline in the future");
    assertThat(db.jobCount()).as("nothing written").isZero();

    // The SQL path with a good deadline; the old pgbus.enqueue keeps its calls.
    long id =
        db.queryLong("SELECT pgbus.enqueue_start_by('good_sb', '{}', now() + interval '1 hour')");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ? AND start_by > now()", id))
        .isEqualTo(1);
    assertThat(db.queryLong("SELECT pgbus.enqueue('good_sb', '{}', now())")).isPositive();
  }

  private Engine engine(String queue) {
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("main", 2, queue)
                        .leaderTtl(Duration.ofSeconds(2))
                        .build())
                .jobs(
                    (job, tx) -> {
                      ran.add(job.id());
                      return Outcome.complete();
                    }));
    Await.until("a leader", WAIT, engine::leader);
    TestEngines.awaitDelivering(engine);
    return engine;
  }
}

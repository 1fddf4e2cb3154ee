package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.FinishedState;
import io.pgbus.InvalidJobException;
import io.pgbus.ReplaceField;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Unique keys over a period and chosen states, replace and debounce (issue #31 items 2 and 4), on
 * real PostgreSQL with three engines (each its own {@link Jobs}, connection and thread) enqueuing
 * the same keys at once; bad input refused on the Java and the SQL path with the value and the fix.
 */
class UniqueRulesTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach("pgbus.job", "pgbus.unique_claim", "pgbus.audit", "pgbus.leader");

  private static final int ENGINES = 3;

  private final List<Jobs> engines =
      List.of(jobs(), jobs(), jobs()); // one per producer, as three JVMs would have
  private final ExecutorService pool = Executors.newFixedThreadPool(ENGINES);

  private static Jobs jobs() {
    return new Jobs(EngineConfig.builder().build());
  }

  @AfterEach
  void stop() throws Exception {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  /** Each engine runs {@code work} on its own connection, all released together by a barrier. */
  private <T> List<T> atOnce(EngineWork<T> work) throws Exception {
    CyclicBarrier start = new CyclicBarrier(ENGINES);
    List<Future<T>> futures = new ArrayList<>();
    for (int i = 0; i < ENGINES; i++) {
      Jobs jobs = engines.get(i);
      int n = i;
      Callable<T> task =
          () -> {
            try (Connection c = db.connect()) {
              c.setAutoCommit(false);
              start.await(10, TimeUnit.SECONDS);
              T t = work.run(jobs, c, n);
              if (!c.getAutoCommit()) {
                c.commit();
              }
              return t;
            }
          };
      futures.add(pool.submit(task));
    }
    List<T> all = new ArrayList<>();
    for (Future<T> f : futures) {
      all.add(f.get(30, TimeUnit.SECONDS));
    }
    return all;
  }

  @FunctionalInterface
  private interface EngineWork<T> {
    T run(Jobs jobs, Connection c, int engine) throws Exception;
  }

  private static Enqueued enqueue(Jobs jobs, Connection c, String queue, EnqueueOptions o) {
    return jobs.enqueueIfAbsent(c, new NewJob(queue, "{\"n\":1}", o));
  }

  private static Enqueued enqueue(String queue, String payload, EnqueueOptions o)
      throws SQLException {
    try (Connection c = db.connect()) {
      return jobs().enqueueIfAbsent(c, new NewJob(queue, payload, o));
    }
  }

  /** The message of the error {@code sql} raises (it must raise one). */
  private static String sqlError(String sql, Object... args) {
    try (Connection c = db.connect();
        var ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.execute();
    } catch (SQLException e) {
      return e.getMessage();
    }
    throw new AssertionError("no error from " + sql);
  }

  private static EnqueueOptions perHour(String key) {
    return EnqueueOptions.defaults().withUniqueKey(key).forPeriod(Duration.ofHours(1));
  }

  @Test
  void threeEnginesEnqueuingTheSameKeysAtOnceGetOneJobPerKeyPerPeriod() throws Exception {
    for (int round = 0; round < 20; round++) {
      String key = "order-" + round;
      List<Enqueued> got = atOnce((jobs, c, n) -> enqueue(jobs, c, "unique_p", perHour(key)));
      assertThat(got).extracting(Enqueued::id).containsOnly(got.get(0).id());
      assertThat(got).filteredOn(Enqueued::inserted).hasSize(1);
      assertThat(got)
          .filteredOn(e -> !e.inserted())
          .extracting(Enqueued::result)
          .containsOnly(Enqueued.Result.DUPLICATE);
    }
    assertThat(db.jobCount("unique_p", "available")).isEqualTo(20);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.unique_claim")).isEqualTo(20);

    // Completed inside the period, the job still holds its key, for three engines at once again.
    long first = db.queryLong("SELECT id FROM pgbus.job WHERE unique_key = 'order-0'");
    db.update("UPDATE pgbus.job SET state = 'completed', finalized_at = now() WHERE id = ?", first);
    List<Enqueued> again = atOnce((jobs, c, n) -> enqueue(jobs, c, "unique_p", perHour("order-0")));
    assertThat(again).extracting(Enqueued::id).containsOnly(first);
    assertThat(again).noneMatch(Enqueued::inserted);

    // Once the period is over, the next enqueue takes the key: exactly one new job.
    db.update("UPDATE pgbus.unique_claim SET until = now() - interval '1 second'");
    List<Enqueued> after = atOnce((jobs, c, n) -> enqueue(jobs, c, "unique_p", perHour("order-0")));
    assertThat(after).filteredOn(Enqueued::inserted).hasSize(1);
    assertThat(after)
        .extracting(Enqueued::id)
        .containsOnly(after.get(0).id())
        .doesNotContain(first);
  }

  @Test
  void theStatesSayWhichFinishedJobsHoldTheKey() throws Exception {
    // By default a completed job holds the key for the period, a dead one frees it.
    Enqueued a = enqueue("unique_s", "{}", perHour("a"));
    db.update("UPDATE pgbus.job SET state = 'dead', finalized_at = now() WHERE id = ?", a.id());
    Enqueued a2 = enqueue("unique_s", "{}", perHour("a"));
    assertThat(a2.inserted()).isTrue();
    assertThat(a2.id()).isNotEqualTo(a.id());

    // amongStates(DEAD, CANCELLED): once per period, whatever happened.
    EnqueueOptions any = perHour("b").amongStates(FinishedState.DEAD, FinishedState.CANCELLED);
    Enqueued b = enqueue("unique_s", "{}", any);
    db.update("UPDATE pgbus.job SET state = 'dead', finalized_at = now() WHERE id = ?", b.id());
    Enqueued b2 = enqueue("unique_s", "{}", any);
    assertThat(b2).isEqualTo(new Enqueued(b.id(), true));

    // A job deleted on completion (or pruned) counts as completed.
    Enqueued c = enqueue("unique_s", "{}", perHour("c"));
    db.update("DELETE FROM pgbus.job WHERE id = ?", c.id());
    assertThat(enqueue("unique_s", "{}", perHour("c"))).isEqualTo(new Enqueued(c.id(), true));

    // A plain unique key (as the previous release enqueues) still meets a waiting holder.
    Enqueued d = enqueue("unique_s", "{}", perHour("d"));
    assertThat(enqueue("unique_s", "{}", EnqueueOptions.defaults().withUniqueKey("d")))
        .isEqualTo(new Enqueued(d.id(), true));

    // The leader's prune round deletes expired claims only.
    db.update(
        "UPDATE pgbus.unique_claim SET until = now() - interval '1 second' WHERE unique_key = 'a'");
    try (Connection conn = db.connect()) {
      assertThat(UniqueEnqueue.expireClaims(conn, 100)).isEqualTo(1);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.unique_claim")).isEqualTo(3);
  }

  @Test
  void aDuplicateReplacesAWaitingJobInPlaceAndIsAudited() throws Exception {
    EnqueueOptions o = EnqueueOptions.defaults().withUniqueKey("doc-7");
    Enqueued first = enqueue("unique_r", "{\"v\":1}", o.withDelay(Duration.ofHours(1)));
    Enqueued second =
        enqueue(
            "unique_r",
            "{\"v\":2}",
            o.withPriority(-5)
                .replacing(ReplaceField.PAYLOAD, ReplaceField.RUN_AT, ReplaceField.PRIORITY));
    assertThat(second.id()).isEqualTo(first.id());
    assertThat(second.result()).isEqualTo(Enqueued.Result.REPLACED);
    assertThat(
            db.queryText(
                "SELECT payload->>'v' || ' ' || priority || ' ' || state || ' ' || (run_at <= now())"
                    + " FROM pgbus.job WHERE id = ?",
                first.id()))
        .isEqualTo("2 -5 available true");
    assertThat(
            db.queryText(
                "SELECT detail->>'fields' FROM pgbus.audit WHERE action = 'replace' AND job_id = ?",
                first.id()))
        .isEqualTo("[\"payload\", \"run_at\", \"priority\"]");
    // A job that waits on another keeps its run time (it runs when that one is done), also by id.
    Enqueued dep =
        enqueue("unique_r", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    Enqueued after =
        enqueue(
            "unique_r",
            "{}",
            EnqueueOptions.defaults().withUniqueKey("after-1").afterJobs(dep.id()));
    Enqueued moved =
        enqueue(
            "unique_r",
            "{}",
            EnqueueOptions.defaults().withUniqueKey("after-1").replacing(ReplaceField.RUN_AT));
    assertThat(moved).isEqualTo(new Enqueued(after.id(), true, Enqueued.Result.REPLACED));
    assertThat(db.job(after.id()).state()).isEqualTo("scheduled");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE id = ? AND run_at > now() + interval '1 year'",
                after.id()))
        .isEqualTo(1);
    assertThat(sqlError("SELECT pgbus.replace_job(?, run_at => now())", after.id()))
        .contains("waits on other jobs or is in a batch")
        .contains("replace its priority only, or cancel it");
    // Without replacing: a plain duplicate, the job as it was.
    assertThat(enqueue("unique_r", "{\"v\":3}", o).result()).isEqualTo(Enqueued.Result.DUPLICATE);
    assertThat(db.queryText("SELECT payload->>'v' FROM pgbus.job WHERE id = ?", first.id()))
        .isEqualTo("2");
  }

  @Test
  void aRunningJobIsNeverReplacedAndThreeEnginesAreToldSo() throws Exception {
    EnqueueOptions o =
        EnqueueOptions.defaults().withUniqueKey("run-1").replacing(ReplaceField.PAYLOAD);
    Enqueued first = enqueue("unique_run", "{\"v\":1}", o);
    try (Connection c = db.connect()) {
      assertThat(new JobStore().jobClaim(c, List.of("unique_run"), 1, "w", Duration.ofMinutes(1)))
          .hasSize(1);
    }
    List<Enqueued> got =
        atOnce(
            (jobs, c, n) ->
                jobs.enqueueIfAbsent(c, new NewJob("unique_run", "{\"v\":" + (10 + n) + "}", o)));
    assertThat(got)
        .allSatisfy(
            e -> {
              assertThat(e.id()).isEqualTo(first.id());
              assertThat(e.result()).isEqualTo(Enqueued.Result.NOT_REPLACED);
            });
    assertThat(db.job(first.id()).state()).isEqualTo("running");
    assertThat(db.queryText("SELECT payload->>'v' FROM pgbus.job WHERE id = ?", first.id()))
        .isEqualTo("1");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'unique_run'"))
        .isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE action = 'replace'")).isZero();

    // By id, the SQL path refuses it naming the state and the fix.
    assertThat(sqlError("SELECT pgbus.replace_job(?, '{\"v\":9}'::jsonb)", first.id()))
        .contains("job " + first.id() + " is running, not waiting")
        .contains("enqueue a new job after it, or cancel it first");
  }

  @Test
  void debounceUnderThreeConcurrentProducersEndsWithOneJobDueWithinItsBounds() throws Exception {
    Duration window = Duration.ofMillis(400);
    Duration maxWait = Duration.ofMillis(1500);
    EnqueueOptions o =
        EnqueueOptions.defaults()
            .withUniqueKey("search-doc-3")
            .debounce(window, maxWait)
            .replacing(ReplaceField.PAYLOAD);
    Instant stop = Instant.now().plusMillis(2500); // longer than maxWait: it must not slip past it
    List<List<Enqueued>> got =
        atOnce(
            (jobs, c, n) -> {
              List<Enqueued> mine = new ArrayList<>();
              c.setAutoCommit(true);
              int i = 0;
              while (Instant.now().isBefore(stop)) {
                mine.add(
                    jobs.enqueueIfAbsent(
                        c, new NewJob("unique_d", "{\"p\":" + n + ",\"i\":" + i++ + "}", o)));
                Thread.sleep(20);
              }
              return mine;
            });
    List<Enqueued> all = got.stream().flatMap(List::stream).toList();
    assertThat(all).extracting(Enqueued::id).containsOnly(all.get(0).id());
    assertThat(all).filteredOn(Enqueued::inserted).hasSize(1);
    assertThat(all)
        .filteredOn(e -> !e.inserted())
        .extracting(Enqueued::result)
        .containsOnly(Enqueued.Result.REPLACED);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'unique_d'"))
        .isEqualTo(1);
    // Pushed forward past the first window, never past first enqueue + maxWait.
    assertThat(
            db.queryText(
                "SELECT (run_at > created_at + interval '400 milliseconds')::text || ' '"
                    + " || (run_at <= created_at + interval '1500 milliseconds')::text"
                    + " FROM pgbus.job WHERE queue = 'unique_d'"))
        .isEqualTo("true true");
    // The last payload won, and a debounce alone writes no audit row.
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE action = 'replace'"))
        .isEqualTo(all.size() - 1);
  }

  @Test
  void aDebounceNeverPushesAJobToItsStartByDeadlineUnderThreeConcurrentProducers()
      throws Exception {
    // The queue's max-wait gives the first enqueue its deadline: due in the window, 800 ms on.
    List<Jobs> withMaxWait =
        List.of(maxWaitJobs(), maxWaitJobs(), maxWaitJobs()); // one per producer
    EnqueueOptions o =
        EnqueueOptions.defaults()
            .withUniqueKey("search-doc-sb")
            .debounce(Duration.ofMillis(400), Duration.ofSeconds(10));
    Instant stop = Instant.now().plusMillis(2000); // past the deadline: pushes must stop short
    List<List<Enqueued>> got =
        atOnce(
            (ignored, c, n) -> {
              List<Enqueued> mine = new ArrayList<>();
              c.setAutoCommit(true);
              while (Instant.now().isBefore(stop)) {
                mine.add(withMaxWait.get(n).enqueueIfAbsent(c, new NewJob("unique_sb", "{}", o)));
                Thread.sleep(20);
              }
              return mine;
            });
    List<Enqueued> all = got.stream().flatMap(List::stream).toList();
    assertThat(all).extracting(Enqueued::id).containsOnly(all.get(0).id());
    assertThat(all).filteredOn(Enqueued::inserted).hasSize(1);
    // Pushed while the push stayed before the deadline, then left where it was.
    assertThat(all)
        .filteredOn(e -> !e.inserted())
        .extracting(Enqueued::result)
        .contains(Enqueued.Result.REPLACED, Enqueued.Result.NOT_REPLACED)
        .containsOnly(Enqueued.Result.REPLACED, Enqueued.Result.NOT_REPLACED);
    assertThat(
            db.queryText(
                "SELECT (start_by BETWEEN created_at + interval '1000 milliseconds'"
                    + " AND created_at + interval '1400 milliseconds')::text || ' '"
                    + " || (run_at > created_at + interval '400 milliseconds')::text || ' '"
                    + " || (run_at < start_by)::text FROM pgbus.job WHERE queue = 'unique_sb'"))
        .isEqualTo("true true true");
  }

  @Test
  void aRunAtReplacedToOrPastTheHoldersDeadlineLeavesItAsItIsOnTheJavaAndTheSqlPath()
      throws Exception {
    Instant deadline = Instant.now().plusSeconds(3600);
    Enqueued first =
        enqueue(
            "unique_sbr",
            "{\"v\":1}",
            EnqueueOptions.defaults()
                .withUniqueKey("k")
                .withDelay(Duration.ofMinutes(10))
                .startBy(deadline));
    EnqueueOptions replace =
        EnqueueOptions.defaults()
            .withUniqueKey("k")
            .replacing(ReplaceField.RUN_AT, ReplaceField.PAYLOAD)
            .withRunAt(deadline.plusSeconds(60));
    Enqueued late = enqueue("unique_sbr", "{\"v\":2}", replace);
    assertThat(late.id()).isEqualTo(first.id());
    assertThat(late.result()).isEqualTo(Enqueued.Result.NOT_REPLACED);
    assertThat(db.queryText("SELECT payload::text FROM pgbus.job WHERE id = ?", first.id()))
        .isEqualTo("{\"v\": 1}");
    assertThat(
            db.queryText(
                "SELECT e.outcome FROM pgbus.enqueue_unique('unique_sbr', '{\"v\":3}', 'k',"
                    + " replace => '{run_at}', run_at => now() + interval '2 hours') e"))
        .isEqualTo("not_replaced");
    // Before the deadline it is replaced as any waiting job.
    assertThat(
            enqueue("unique_sbr", "{\"v\":4}", replace.withRunAt(Instant.now().plusSeconds(1800)))
                .result())
        .isEqualTo(Enqueued.Result.REPLACED);
    // By id, the SQL path refuses it naming the value and the fix.
    assertThat(
            sqlError(
                "SELECT pgbus.replace_job(?, run_at => now() + interval '2 hours')", first.id()))
        .contains("is not before job " + first.id() + "'s start-by deadline")
        .contains("give an earlier run_at");
  }

  private static Jobs maxWaitJobs() {
    return new Jobs(
        EngineConfig.builder()
            .queuePolicy(
                new QueuePolicy("unique_sb", null, null, null, null, Duration.ofMillis(800)))
            .build());
  }

  @Test
  void badInputIsRefusedNamingTheValueAndTheFixOnTheJavaPath() {
    EnqueueOptions keyed = EnqueueOptions.defaults().withUniqueKey("k");
    assertThatThrownBy(() -> keyed.forPeriod(Duration.ZERO))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("unique period PT0S is not positive")
        .hasMessageContaining("forPeriod(Duration.ofHours(1))");
    assertThatThrownBy(() -> keyed.forPeriod(Duration.ofMinutes(-5)))
        .hasMessageContaining("unique period PT-5M is not positive");
    assertThatThrownBy(() -> keyed.forPeriod(Duration.ofDays(40_000)))
        .hasMessageContaining("unique period PT960000H is too far ahead");
    assertThatThrownBy(() -> keyed.debounce(Duration.ofMinutes(2), Duration.ofMinutes(1)))
        .hasMessageContaining("debounce window PT2M is over its max wait PT1M")
        .hasMessageContaining("give a window of at most maxWait, or a longer maxWait");
    assertThatThrownBy(() -> keyed.debounce(Duration.ZERO, Duration.ofMinutes(1)))
        .hasMessageContaining("debounce window PT0S and max wait PT1M must be positive");
    assertThatThrownBy(() -> EnqueueOptions.defaults().forPeriod(Duration.ofHours(1)))
        .hasMessageContaining("forPeriod(PT1H) needs a unique key: call withUniqueKey(key) first");
    assertThatThrownBy(() -> keyed.amongStates(FinishedState.COMPLETED))
        .hasMessageContaining("needs a period: call withUniqueKey(key).forPeriod(period) first");
    assertThatThrownBy(
            () ->
                keyed
                    .debounce(Duration.ofSeconds(1), Duration.ofSeconds(5))
                    .replacing(ReplaceField.RUN_AT))
        .hasMessageContaining("debounce sets the run time itself");
    EnqueueOptions late =
        keyed.debounce(Duration.ofSeconds(1), Duration.ofSeconds(5)).withDelay(Duration.ofHours(1));
    assertThatThrownBy(() -> enqueue("unique_bad", "{}", late))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("debounce sets the run time itself (queue 'unique_bad')")
        .hasMessageContaining("drop withRunAt/withDelay");
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void badInputIsRefusedNamingTheValueAndTheFixOnTheSqlPath() {
    assertThat(
            sqlError(
                "SELECT pgbus.enqueue_unique('unique_bad', '{}', 'k', period => interval '0')"))
        .contains("unique period 00:00:00 is not positive")
        .contains("give a period over zero");
    assertThat(
            sqlError(
                "SELECT pgbus.enqueue_unique('unique_bad', '{}', 'k',"
                    + " period => interval '-1 hour')"))
        .contains("unique period -01:00:00 is not positive");
    assertThat(
            sqlError(
                "SELECT pgbus.enqueue_unique('unique_bad', '{}', 'k',"
                    + " debounce => interval '2 minutes', max_wait => interval '1 minute')"))
        .contains("debounce window 00:02:00 is over its max_wait 00:01:00")
        .contains("give a window of at most max_wait, or a longer max_wait");
    assertThat(
            sqlError(
                "SELECT pgbus.enqueue_unique('unique_bad', '{}', 'k', period => interval '1 day',"
                    + " states => '{finished}')"))
        .contains("unique state 'finished' is not a job state")
        .contains("use completed, dead or cancelled");
    assertThat(
            sqlError("SELECT pgbus.enqueue_unique('unique_bad', '{}', 'k', replace => '{body}')"))
        .contains("replace field 'body' is not one of payload, run_at, priority");
    assertThat(db.queryText("SELECT pgbus.replace_job(424242, '{}'::jsonb)::text"))
        .isEqualTo("false");
    assertThat(db.jobCount()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.unique_claim")).isZero();
  }

  @Test
  void theSqlPathAgreesWithTheJavaPath() {
    String first =
        db.queryText(
            "SELECT outcome FROM pgbus.enqueue_unique('unique_sql', '{\"v\":1}', 'x',"
                + " period => interval '1 hour', replace => '{payload}')");
    String second =
        db.queryText(
            "SELECT outcome FROM pgbus.enqueue_unique('unique_sql', '{\"v\":2}', 'x',"
                + " period => interval '1 hour', replace => '{payload}')");
    assertThat(List.of(first, second)).containsExactly("inserted", "replaced");
    assertThat(db.queryText("SELECT payload->>'v' FROM pgbus.job WHERE queue = 'unique_sql'"))
        .isEqualTo("2");
    db.queryText(
        "SELECT pgbus.replace_job(id, run_at => now() + interval '1 hour')::text"
            + " FROM pgbus.job WHERE queue = 'unique_sql'");
    assertThat(db.queryText("SELECT state FROM pgbus.job WHERE queue = 'unique_sql'"))
        .isEqualTo("scheduled");
  }

  @Test
  void theAdminApisReplaceMovesAWaitingJobAsItsCallerAndRefusesARunningOne() throws Exception {
    Enqueued waiting =
        enqueue("unique_adm", "{}", EnqueueOptions.defaults().withDelay(Duration.ofHours(2)));
    Enqueued running = enqueue("unique_adm_run", "{}", EnqueueOptions.defaults());
    try (Connection c = db.connect()) {
      assertThat(
              new JobStore().jobClaim(c, List.of("unique_adm_run"), 1, "w", Duration.ofMinutes(1)))
          .hasSize(1);
    }
    JobAdminStore store = new JobAdminStore();
    try (Connection c = db.connect()) {
      assertThat(store.jobReplace(c, waiting.id(), Instant.now().minusSeconds(1), 9, "alice"))
          .isTrue();
      assertThat(store.jobReplace(c, 987654321L, null, 1, "alice")).isFalse();
      assertThatThrownBy(() -> store.jobReplace(c, running.id(), null, 1, "alice"))
          .isInstanceOfSatisfying(
              SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("55000"))
          .hasMessageContaining("job " + running.id() + " is running, not waiting");
    }
    assertThat(
            db.queryText(
                "SELECT state || ' ' || priority FROM pgbus.job WHERE id = ?", waiting.id()))
        .isEqualTo("available 9");
    assertThat(
            db.queryText(
                "SELECT actor || ' ' || (detail->>'fields') FROM pgbus.audit"
                    + " WHERE action = 'replace' AND job_id = ?",
                waiting.id()))
        .isEqualTo("alice [\"run_at\", \"priority\"]");
  }
}

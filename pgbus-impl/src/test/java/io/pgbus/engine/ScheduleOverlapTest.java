package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.OverlapPolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A schedule's overlap policy (issue #31): each policy against a previous run that still waits or
 * runs, decided from the database by whichever leader ticks; across a real leader change; bad
 * values refused on the configuration's, the Java API's and the SQL path alike.
 */
class ScheduleOverlapTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated()
          .emptiedBeforeEach(
              "pgbus.job", "pgbus.job_dependency", "pgbus.audit", "pgbus.cron", "pgbus.schedule");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Instant DAY1 = Instant.parse("2026-01-05T03:00:00Z");
  private static final Duration DAY = Duration.ofDays(1);

  private final JobStore store = new JobStore();
  private final Jobs jobs = new Jobs(EngineConfig.builder().build());
  private final ScheduleBook book = new ScheduleBook(jobs, 65536);

  @Test
  void allowEnqueuesEveryRunWhileThePreviousOneStillWaits() throws Exception {
    create("al", OverlapPolicy.ALLOW);
    ScheduleEnqueuer leader = enqueuer();
    assertThat(tick(leader, DAY1)).isEqualTo(1);
    assertThat(tick(leader, DAY1.plus(DAY))).isEqualTo(1);
    assertThat(db.jobs("alq")).extracting(JobRow::state).containsOnly("available");
    assertThat(db.jobs("alq")).hasSize(2);
    assertThat(schedule("al").lastOutcome()).isEqualTo("enqueued");
    assertThat(schedule("al").lastJobId()).isEqualTo(db.jobs("alq").get(1).id());
  }

  @Test
  void skipRecordsTheRunAsSkippedWhileThePreviousWaitsOrRunsAndRunsAgainOnceItEnded()
      throws Exception {
    create("sk", OverlapPolicy.SKIP);
    ScheduleEnqueuer leader = enqueuer();
    assertThat(tick(leader, DAY1)).isEqualTo(1);
    long first = db.jobs("skq").get(0).id();

    // Waiting: the day-2 run is skipped, audited, and no job is written.
    assertThat(tick(leader, DAY1.plus(DAY))).isZero();
    assertThat(db.jobs("skq")).extracting(JobRow::id).containsExactly(first);
    Schedule s = schedule("sk");
    assertThat(s.lastOutcome()).isEqualTo("skipped");
    assertThat(s.lastJobId()).as("the run still to be waited out").isEqualTo(first);
    assertThat(s.lastRun()).as("the latest run enqueued").isEqualTo(DAY1);
    assertThat(s.nextRun()).isEqualTo(DAY1.plus(DAY.multipliedBy(2)));
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'schedule_skip' AND schedule = 'sk'"
                    + " AND job_id = ? AND detail->>'run' = ?",
                first,
                DAY1.plus(DAY).toString()))
        .isEqualTo(1);
    assertThat(leader.skipped()).isEqualTo(1);

    // Running on some JVM: still skipped.
    claim("skq");
    assertThat(tick(leader, DAY1.plus(DAY.multipliedBy(2)))).isZero();

    // Ended (completed here; dead or cancelled alike): the next run is enqueued.
    db.update("UPDATE pgbus.job SET state = 'completed', finalized_at = now() WHERE id = ?", first);
    assertThat(tick(leader, DAY1.plus(DAY.multipliedBy(3)))).isEqualTo(1);
    assertThat(db.jobs("skq")).hasSize(2);
    assertThat(schedule("sk").lastOutcome()).isEqualTo("enqueued");
    assertThat(schedule("sk").lastRun()).isEqualTo(DAY1.plus(DAY.multipliedBy(3)));
  }

  @Test
  void queueMakesTheRunWaitOnThePreviousRunAndReleasesItWhenThatCompletes() throws Exception {
    create("qu", OverlapPolicy.QUEUE);
    ScheduleEnqueuer leader = enqueuer();
    assertThat(tick(leader, DAY1)).isEqualTo(1);
    ClaimedJob first = claim("quq");

    assertThat(tick(leader, DAY1.plus(DAY))).isEqualTo(1);
    long second = schedule("qu").lastJobId();
    assertThat(schedule("qu").lastOutcome()).isEqualTo("queued");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_dependency WHERE depends_on = ? AND job_id = ?",
                first.id(),
                second))
        .isEqualTo(1);
    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, List.of("quq"), 10, "other", Duration.ofMinutes(1)))
          .as("the queued run cannot start while the previous one runs")
          .isEmpty();
      assertThat(store.jobComplete(c, first)).isTrue();
    }
    assertThat(db.job(second).state()).isEqualTo("available");

    // The queued run now waits or runs itself: the day-3 run waits on it in turn.
    assertThat(tick(leader, DAY1.plus(DAY.multipliedBy(2)))).isEqualTo(1);
    long third = schedule("qu").lastJobId();
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job_dependency WHERE depends_on = ? AND job_id = ?",
                second,
                third))
        .isEqualTo(1);
  }

  @Test
  void cancelPreviousCancelsAWaitingRunAtOnceAndAsksARunningOneToStop() throws Exception {
    create("cp", OverlapPolicy.CANCEL_PREVIOUS);
    ScheduleEnqueuer leader = enqueuer();
    assertThat(tick(leader, DAY1)).isEqualTo(1);
    ClaimedJob running = claim("cpq");

    assertThat(tick(leader, DAY1.plus(DAY))).isEqualTo(1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE id = ? AND cancel_attempt = attempt",
                running.id()))
        .as("the running run is asked to stop, as an operator's cancel does")
        .isEqualTo(1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'cancel' AND job_id = ?"
                    + " AND actor = 'schedule:cp'",
                running.id()))
        .isEqualTo(1);
    long second = schedule("cp").lastJobId();
    assertThat(schedule("cp").lastOutcome()).isEqualTo("cancelled_previous");

    // A waiting previous run is cancelled at once.
    assertThat(tick(leader, DAY1.plus(DAY.multipliedBy(2)))).isEqualTo(1);
    assertThat(db.job(second).state()).isEqualTo("cancelled");
    assertThat(db.jobCount("cpq", "available") + db.jobCount("cpq", "scheduled")).isEqualTo(1);
  }

  @Test
  void skipHoldsAcrossALeaderChangeWhileTheRunIsStillRunning() throws Exception {
    // Every second; the run's job is claimed by a JVM that keeps it running throughout.
    withConnection(
        c ->
            book.create(
                c,
                ScheduleDefinition.of("lc", "* * * * * *", "lcq").withOverlap(OverlapPolicy.SKIP),
                null));
    Engine first = leaderEngine();
    Await.until("the first run", Duration.ofSeconds(15), () -> db.jobs("lcq").size(), n -> n == 1);
    ClaimedJob run = claim("lcq");
    Await.until("the first leader to skip runs", Duration.ofSeconds(15), this::skips, n -> n >= 2);

    // The leader dies mid-run: its lease is left as a crash leaves it.
    String holder = first.config().workerId();
    first.stop();
    try (Connection c = db.connect()) {
      new LeaderStore()
          .leaderAttemptElect(c, Elector.MAINTENANCE, holder, Elector.lease(Duration.ofSeconds(2)));
    }
    long skippedBefore = skips();
    Engine second = leaderEngine();
    Await.until("the new leader", Duration.ofSeconds(15), second::leader);
    Await.until(
        "the new leader to skip runs too",
        Duration.ofSeconds(15),
        this::skips,
        n -> n >= skippedBefore + 2);
    assertThat(db.jobs("lcq"))
        .as("no run was enqueued beside the running one, by either leader")
        .extracting(JobRow::id)
        .containsExactly(run.id());

    try (Connection c = db.connect()) {
      assertThat(store.jobComplete(c, run)).isTrue();
    }
    Await.until(
        "a run once the previous one ended",
        Duration.ofSeconds(15),
        () -> db.jobs("lcq").size(),
        n -> n >= 2);
    assertThat(schedule("lc").lastOutcome()).isIn("enqueued", "skipped");
  }

  @Test
  void aConfiguredCronStoresItsOverlapAndABadValueNamesTheKeyTheValueAndTheChoices()
      throws Exception {
    var cron = CronJob.of("nightly", "0 3 * * *", "nq").withOverlap(" Cancel-Previous ");
    assertThat(cron.overlap()).isEqualTo(OverlapPolicy.CANCEL_PREVIOUS);
    assertThat(CronJob.of("n", "@daily", "q").overlap()).isEqualTo(OverlapPolicy.ALLOW);
    var leader =
        new ScheduleEnqueuer(
            List.of(cron), store, new JdbcTransactions(db.dataSource()), Duration.ofMinutes(1));
    assertThat(leader.syncConfig(DAY1)).isEqualTo(1);
    assertThat(schedule("nightly").definition().overlap()).isEqualTo(OverlapPolicy.CANCEL_PREVIOUS);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE schedule = 'nightly'"
                    + " AND detail->>'overlap' = 'cancel_previous'"))
        .isEqualTo(1);

    assertThatThrownBy(() -> CronJob.of("bad", "@daily", "q").withOverlap("never"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.cron.bad.overlap=never is invalid")
        .hasMessageContaining("allow")
        .hasMessageContaining("skip")
        .hasMessageContaining("queue")
        .hasMessageContaining("cancel-previous");
  }

  @Test
  void theDatabaseRefusesAnUnknownOverlapNamingTheValueAndTheChoices() throws Exception {
    create("db", OverlapPolicy.SKIP);
    assertThatThrownBy(() -> db.update("UPDATE pgbus.schedule SET overlap = 'never'"))
        .hasStackTraceContaining("unknown overlap policy 'never'")
        .hasStackTraceContaining("allow, skip, queue or cancel_previous");
    assertThat(schedule("db").definition().overlap()).isEqualTo(OverlapPolicy.SKIP);
    // A release before V42 writes no overlap: its schedules allow overlap, as they always did.
    db.update(
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, next_run_at, source)"
            + " VALUES ('old', '0 3 * * *', 'UTC', 'oldq', '{}', now(), 'api')");
    assertThat(schedule("old").definition().overlap()).isEqualTo(OverlapPolicy.ALLOW);
  }

  private void create(String name, OverlapPolicy policy) {
    withConnection(
        c ->
            book.create(
                c, ScheduleDefinition.of(name, "0 3 * * *", name + "q").withOverlap(policy), null));
    db.update(
        "UPDATE pgbus.schedule SET next_run_at = ? WHERE name = ?",
        OffsetDateTime.ofInstant(DAY1, ZoneOffset.UTC),
        name);
  }

  private int tick(ScheduleEnqueuer leader, Instant run) throws Exception {
    try (Connection c = db.connect()) {
      return leader.tick(c, run.plusMillis(20)).enqueued();
    }
  }

  /** Claims the queue's one waiting job, as a JVM that then runs it for long. */
  private ClaimedJob claim(String queue) throws Exception {
    db.update("UPDATE pgbus.job SET run_at = now() WHERE queue = ?", queue);
    try (Connection c = db.connect()) {
      List<ClaimedJob> claimed =
          store.jobClaim(c, List.of(queue), 1, "runner-jvm", Duration.ofMinutes(5));
      assertThat(claimed).hasSize(1);
      return claimed.get(0);
    }
  }

  private long skips() {
    return db.queryLong(
        "SELECT count(*) FROM pgbus.audit WHERE action = 'schedule_skip' AND schedule = 'lc'");
  }

  private Engine leaderEngine() {
    Engine e =
        engines.start(engines.builder(engines.config().leaderTtl(Duration.ofSeconds(2)).build()));
    Await.until("a leader", Duration.ofSeconds(15), e::leader);
    return e;
  }

  private Schedule schedule(String name) {
    try (Connection c = db.connect()) {
      return book.get(c, name).orElseThrow();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private ScheduleEnqueuer enqueuer() {
    return new ScheduleEnqueuer(
        List.of(), store, new JdbcTransactions(db.dataSource()), ScheduleEnqueuer.MAX_WAIT);
  }

  private interface ConnectionWork {
    void run(Connection c) throws Exception;
  }

  private static void withConnection(ConnectionWork work) {
    try (Connection c = db.connect()) {
      work.run(c);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}

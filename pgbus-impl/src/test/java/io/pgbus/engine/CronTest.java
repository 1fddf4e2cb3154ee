package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Cron: the maintenance leader enqueues exactly one job per scheduled run, across engines and
 * leader changes; after downtime only the latest missed run is enqueued; bad schedules are refused
 * with the rule. Ticks with a driven clock show the rules; engines on the real clock show the
 * fleet.
 */
class CronTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.cron", "pgbus.schedule");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Instant DAY1_0300 = Instant.parse("2026-01-05T03:00:00Z");
  private static final Duration DAY = Duration.ofDays(1);

  private final JobStore store = new JobStore();

  @Test
  void aCronSeenForTheFirstTimeStartsWithItsNextRun() throws Exception {
    ScheduleEnqueuer cron = enqueuer(CronJob.of("nightly", "0 3 * * *", "reports"));
    try (Connection c = db.connect()) {
      ScheduleEnqueuer.Tick first = cron.tick(c, DAY1_0300.plusSeconds(30));
      assertThat(first.enqueued()).isZero();
      assertThat(cron.tick(c, DAY1_0300.plus(DAY).minusSeconds(1)).enqueued()).isZero();

      ScheduleEnqueuer.Tick due = cron.tick(c, DAY1_0300.plus(DAY).plusMillis(20));

      assertThat(due.enqueued()).isEqualTo(1);
      assertThat(due.untilNext()).isEqualTo(ScheduleEnqueuer.MAX_WAIT);
    }
    assertThat(runs("reports")).containsExactly(DAY1_0300.plus(DAY));
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE unique_key = ?",
                "cron:nightly:" + DAY1_0300.plus(DAY)))
        .isEqualTo(1);
  }

  @Test
  void afterDowntimeOnlyTheLatestMissedRunIsEnqueued() throws Exception {
    ScheduleEnqueuer cron = enqueuer(CronJob.of("nightly", "0 3 * * *", "reports"));
    try (Connection c = db.connect()) {
      cron.tick(c, DAY1_0300.minusSeconds(60));
      assertThat(cron.tick(c, DAY1_0300).enqueued()).isEqualTo(1);

      // Down from day 1 to day 5, one hour past its run: four runs missed.
      Instant day5 = DAY1_0300.plus(DAY.multipliedBy(4)).plusSeconds(3600);
      assertThat(cron.tick(c, day5).enqueued()).isEqualTo(1);
      assertThat(cron.tick(c, day5.plusSeconds(1)).enqueued()).isZero();
    }
    assertThat(runs("reports")).containsExactly(DAY1_0300, DAY1_0300.plus(DAY.multipliedBy(4)));
  }

  @Test
  void twoLeadersTickingAtOnceEnqueueEachRunOnce() throws Exception {
    // Two enqueuers stand for two JVMs that both believe they lead, for a moment.
    CronJob job = CronJob.of("pulse", "* * * * * *", "pulses");
    ScheduleEnqueuer a = enqueuer(job);
    ScheduleEnqueuer b = enqueuer(job);
    try (Connection c = db.connect()) {
      a.tick(c, DAY1_0300.minusMillis(500));
    }
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      for (int s = 0; s < 20; s++) {
        Instant clock = DAY1_0300.plusSeconds(s).plusMillis(100);
        var gate = new CountDownLatch(1);
        var ticks = new ArrayList<Future<Integer>>();
        for (ScheduleEnqueuer e : List.of(a, b)) {
          ticks.add(
              threads.submit(
                  () -> {
                    gate.await();
                    try (Connection c = db.connect()) {
                      return e.tick(c, clock).enqueued();
                    }
                  }));
        }
        gate.countDown();
        int enqueued = 0;
        for (Future<Integer> t : ticks) {
          enqueued += t.get(10, TimeUnit.SECONDS);
        }
        assertThat(enqueued).as("jobs enqueued for the run at second %d", s).isEqualTo(1);
      }
    } finally {
      threads.shutdownNow();
    }
    List<Instant> runs = runs("pulses");
    assertThat(runs).hasSize(20).doesNotHaveDuplicates();
    assertThat(a.enqueued() + b.enqueued()).isEqualTo(20);
  }

  @Test
  void aScheduleEverySecondEnqueuesOneJobPerRunOnlyOnTheLeaderAndNoneTwiceAcrossALeaderChange() {
    CronJob tick = CronJob.of("tick", "* * * * * *", "ticks");
    var fleet = new ArrayList<Engine>();
    for (int i = 0; i < 3; i++) {
      fleet.add(
          engines.start(
              engines.builder(
                  engines.config().leaderTtl(Duration.ofSeconds(1)).cron(tick).build())));
    }
    Await.until("3 runs", Duration.ofSeconds(15), () -> runs("ticks").size(), n -> n >= 3);
    Engine leader =
        Await.until(
                "one leader",
                Duration.ofSeconds(5),
                () -> fleet.stream().filter(Engine::leader).toList(),
                l -> l.size() == 1)
            .get(0);
    assertThat(
            fleet.stream()
                .filter(e -> e != leader)
                .mapToLong(e -> e.status().scheduleRunsEnqueued())
                .sum())
        .as("followers enqueue nothing")
        .isZero();

    leader.stop();
    int before = runs("ticks").size();
    Await.until(
        "3 more runs under another leader",
        Duration.ofSeconds(15),
        () -> runs("ticks").size(),
        n -> n >= before + 3);
    for (Engine e : fleet) {
      e.stop();
    }

    List<Instant> runs = runs("ticks");
    assertThat(runs).doesNotHaveDuplicates();
    assertThat(runs).allMatch(t -> t.getNano() == 0, "whole seconds");
    assertThat(
            db.queryLong("SELECT count(DISTINCT unique_key) FROM pgbus.job WHERE queue = 'ticks'"))
        .isEqualTo(runs.size());
    assertThat(
            fleet.stream()
                .filter(e -> e != leader)
                .mapToLong(e -> e.status().scheduleRunsEnqueued())
                .sum())
        .as("the new leader enqueued")
        .isPositive();
    assertThat(fleet.stream().mapToLong(e -> e.status().scheduleRunsEnqueued()).sum())
        .isEqualTo(runs.size());
  }

  @Test
  void schedulesFollowTheirDialectAndZone() {
    CronSchedule daily = CronSchedule.parse("0 3 * * *", ZoneId.of("UTC"));
    assertThat(daily.latestAtOrBefore(DAY1_0300)).isEqualTo(DAY1_0300);
    assertThat(daily.latestAtOrBefore(DAY1_0300.minusSeconds(1))).isEqualTo(DAY1_0300.minus(DAY));
    assertThat(daily.nextAfter(DAY1_0300)).isEqualTo(DAY1_0300.plus(DAY));

    CronSchedule seconds = CronSchedule.parse("*/10 * * * * *", ZoneId.of("UTC"));
    assertThat(seconds.latestAtOrBefore(DAY1_0300.plusMillis(19_999)))
        .isEqualTo(DAY1_0300.plusSeconds(10));

    CronSchedule berlin = CronSchedule.parse("@daily", ZoneId.of("Europe/Berlin"));
    assertThat(berlin.nextAfter(DAY1_0300)).isEqualTo(Instant.parse("2026-01-05T23:00:00Z"));
  }

  // Europe/Berlin in 2026: spring forward on 29 March (02:00 CET -> 03:00 CEST, 01:00Z), fall back
  // on 25 October (03:00 CEST -> 02:00 CET, 01:00Z).
  private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

  @Test
  void aDailyTimeInTheSpringForwardGapRunsOnceAtTheFirstInstantAfterTheGap() throws Exception {
    CronSchedule daily = CronSchedule.parse("30 2 * * *", BERLIN);
    Instant endOfGap = Instant.parse("2026-03-29T01:00:00Z"); // 03:00 CEST
    assertThat(daily.nextAfter(Instant.parse("2026-03-28T01:30:00Z"))).isEqualTo(endOfGap);
    assertThat(daily.nextAfter(endOfGap)).isEqualTo(Instant.parse("2026-03-30T00:30:00Z"));
    assertThat(daily.latestAtOrBefore(endOfGap)).isEqualTo(endOfGap);
    assertThat(daily.latestAtOrBefore(endOfGap.minusSeconds(1)))
        .isEqualTo(Instant.parse("2026-03-28T01:30:00Z"));

    // The leader's ticks through the night: one run, at 03:00 CEST.
    ScheduleEnqueuer cron = enqueuer(new CronJob("gap", "30 2 * * *", BERLIN, "gapq", "{}"));
    try (Connection c = db.connect()) {
      Instant t = Instant.parse("2026-03-28T23:00:00Z");
      cron.tick(c, t);
      for (; t.isBefore(Instant.parse("2026-03-29T04:00:00Z")); t = t.plusSeconds(600)) {
        cron.tick(c, t);
      }
    }
    assertThat(runs("gapq")).containsExactly(endOfGap);
  }

  @Test
  void aCatchUpAcrossTheFallBackNightEnqueuesTheTwoThirtyRunOnce() throws Exception {
    CronSchedule daily = CronSchedule.parse("30 2 * * *", BERLIN);
    Instant first = Instant.parse("2026-10-25T00:30:00Z"); // 02:30 CEST; 02:30 CET is 01:30Z
    assertThat(daily.nextAfter(first.minusSeconds(1))).isEqualTo(first);
    assertThat(daily.nextAfter(first)).isEqualTo(Instant.parse("2026-10-26T01:30:00Z"));
    assertThat(daily.latestAtOrBefore(Instant.parse("2026-10-25T12:00:00Z"))).isEqualTo(first);

    ScheduleEnqueuer cron =
        enqueuer(
            new CronJob("fold", "30 2 * * *", BERLIN, "foldq", "{}").withMisfire("catch-up:10"));
    try (Connection c = db.connect()) {
      cron.tick(c, Instant.parse("2026-10-23T12:00:00Z"));
      // Down from before the 24th's run until the 26th at noon: a catch-up over the fall-back.
      assertThat(cron.tick(c, Instant.parse("2026-10-26T12:00:00Z")).enqueued()).isEqualTo(3);
    }
    assertThat(runs("foldq"))
        .containsExactly(
            Instant.parse("2026-10-24T00:30:00Z"), first, Instant.parse("2026-10-26T01:30:00Z"));
  }

  @Test
  void aWildcardHourScheduleRunsInBothOccurrencesOfTheRepeatedHourAndNotInTheGap() {
    CronSchedule halfHourly = CronSchedule.parse("*/30 * * * *", BERLIN);
    var fallBack = new ArrayList<Instant>();
    for (Instant t = Instant.parse("2026-10-24T23:59:00Z");
        t.isBefore(Instant.parse("2026-10-25T02:00:00Z"));
        t = halfHourly.nextAfter(t)) {
      fallBack.add(halfHourly.nextAfter(t));
    }
    assertThat(fallBack)
        .containsExactly(
            Instant.parse("2026-10-25T00:00:00Z"), // 02:00 CEST
            Instant.parse("2026-10-25T00:30:00Z"),
            Instant.parse("2026-10-25T01:00:00Z"), // 02:00 CET
            Instant.parse("2026-10-25T01:30:00Z"),
            Instant.parse("2026-10-25T02:00:00Z"));
    assertThat(halfHourly.latestAtOrBefore(Instant.parse("2026-10-25T01:10:00Z")))
        .isEqualTo(Instant.parse("2026-10-25T01:00:00Z"));
    assertThat(halfHourly.latestAtOrBefore(Instant.parse("2026-10-25T00:59:59Z")))
        .isEqualTo(Instant.parse("2026-10-25T00:30:00Z"));

    var springForward = new ArrayList<Instant>();
    for (Instant t = Instant.parse("2026-03-28T23:59:00Z");
        t.isBefore(Instant.parse("2026-03-29T01:30:00Z"));
        t = halfHourly.nextAfter(t)) {
      springForward.add(halfHourly.nextAfter(t));
    }
    assertThat(springForward)
        .containsExactly(
            Instant.parse("2026-03-29T00:00:00Z"), // 01:00 CET
            Instant.parse("2026-03-29T00:30:00Z"),
            Instant.parse("2026-03-29T01:00:00Z"), // 03:00 CEST
            Instant.parse("2026-03-29T01:30:00Z"));
  }

  @Test
  void anInvalidScheduleIsRefusedWithTheRule() {
    assertThatThrownBy(() -> CronJob.of("bad", "61 * * * *", "q"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cron 'bad': invalid cron schedule '61 * * * *'")
        .hasMessageContaining("61 not in range")
        .hasMessageContaining("use 5 fields");
    assertThatThrownBy(() -> CronJob.of("bad", "every day", "q"))
        .hasMessageContaining("it has 2 field(s)");
    assertThatThrownBy(() -> CronJob.of("bad", " ", "q"))
        .hasMessageContaining("the cron schedule is empty");
    assertThatThrownBy(() -> CronJob.of("bad name", "@daily", "q"))
        .hasMessageContaining("invalid cron name 'bad name'");
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .cron(CronJob.of("twice", "@daily", "q"))
                    .cron(CronJob.of("twice", "@hourly", "q"))
                    .build())
        .hasMessageContaining("two crons are named 'twice'");
  }

  private ScheduleEnqueuer enqueuer(CronJob job) {
    return new ScheduleEnqueuer(
        List.of(job), store, new JdbcTransactions(db.dataSource()), ScheduleEnqueuer.MAX_WAIT);
  }

  /** The run_at of every job of a queue, by id; a cron job's run_at is the run it is for. */
  private static List<Instant> runs(String queue) {
    try (Connection c = db.helperConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT run_at FROM pgbus.job WHERE queue = ? ORDER BY id")) {
      ps.setString(1, queue);
      var runs = new ArrayList<Instant>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          runs.add(rs.getTimestamp(1).toInstant());
        }
      }
      return runs;
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aCronThatNeverFiresIsRefusedNamingTheExpression() {
    assertThatThrownBy(() -> CronJob.of("feb31", "0 0 31 2 *", "q"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cron 'feb31': the cron schedule '0 0 31 2 *' never fires");
    assertThatThrownBy(() -> CronJob.of("apr31", "0 0 0 31 4 ?", "q"))
        .hasMessageContaining("'0 0 0 31 4 ?' never fires");
    // The 29th of February fires, in leap years.
    assertThat(CronJob.of("leap", "0 0 29 2 *", "q").name()).isEqualTo("leap");
  }
}

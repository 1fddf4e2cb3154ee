package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.InvalidScheduleException;
import io.pgbus.MisfirePolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Schedules stored in the database: made, changed and deleted at run time on one engine and acted
 * on by the leader on another within a poll ceiling; misfire policies across a leader change; bad
 * input refused with nothing written; every change in the caller's transaction.
 */
class ScheduleTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.cron", "pgbus.schedule");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Instant DAY1_0300 = Instant.parse("2026-01-05T03:00:00Z");
  private static final Duration DAY = Duration.ofDays(1);

  private final JobStore store = new JobStore();
  private final ScheduleBook book =
      new ScheduleBook(new Jobs(EngineConfig.builder().build()), 65536);

  @Test
  void misfirePoliciesSkipRunOnceAndCatchUpAcrossALeaderChange() throws Exception {
    try (Connection c = db.connect()) {
      book.create(
          c,
          ScheduleDefinition.of("skip", "0 3 * * *", "skipq").withMisfire(MisfirePolicy.SKIP),
          null);
      book.create(c, ScheduleDefinition.of("once", "0 3 * * *", "onceq"), null);
      book.create(c, ScheduleDefinition.of("catchup", "0 3 * * *", "catchq").catchingUp(3), null);
    }
    db.update("UPDATE pgbus.schedule SET next_run_at = ?", utc(DAY1_0300));

    // The first leader enqueues day 1 on time, under every policy.
    ScheduleEnqueuer first = enqueuer();
    try (Connection c = db.connect()) {
      assertThat(first.tick(c, DAY1_0300.plusMillis(20)).enqueued()).isEqualTo(3);
    }
    // It dies. Four days later, an hour past the day-5 run, another JVM leads: it knows nothing
    // but what the table says. Days 2 to 5 were missed.
    ScheduleEnqueuer second = enqueuer();
    Instant day5 = DAY1_0300.plus(DAY.multipliedBy(4));
    try (Connection c = db.connect()) {
      assertThat(second.tick(c, day5.plusSeconds(3600)).enqueued()).isEqualTo(0 + 1 + 3);
      assertThat(second.tick(c, day5.plusSeconds(3601)).enqueued()).isZero();
      assertThat(first.tick(c, day5.plusSeconds(3602)).enqueued())
          .as("the old leader, back, repeats nothing")
          .isZero();
    }
    assertThat(runs("skipq")).containsExactly(DAY1_0300);
    assertThat(runs("onceq")).containsExactly(DAY1_0300, day5);
    assertThat(runs("catchq"))
        .containsExactly(DAY1_0300, day5.minus(DAY.multipliedBy(2)), day5.minus(DAY), day5);

    // Day 6 on time, and day 7 seen 30 s late (within the grace): a run, not a miss, everywhere.
    Instant day6 = day5.plus(DAY);
    Instant day7 = day6.plus(DAY);
    try (Connection c = db.connect()) {
      assertThat(second.tick(c, day6.plusMillis(20)).enqueued()).isEqualTo(3);
      assertThat(second.tick(c, day7.plusSeconds(30)).enqueued()).isEqualTo(3);
    }
    assertThat(runs("skipq")).containsExactly(DAY1_0300, day6, day7);
    assertThat(book(s -> s.get("once")).lastRun()).isEqualTo(day7);
    assertThat(book(s -> s.get("once")).nextRun()).isEqualTo(day7.plus(DAY));
  }

  @Test
  void misfirePoliciesApplyWhenARealEngineTakesTheLeadAfterDowntime() throws Exception {
    // A daily run 12 hours from the database's hour: the latest run is always long missed.
    int hour =
        (int) ((db.queryLong("SELECT extract(hour FROM now() AT TIME ZONE 'UTC')::int") + 12) % 24);
    String daily = "0 " + hour + " * * *";
    Engine first =
        engines.start(engines.builder(engines.config().leaderTtl(Duration.ofSeconds(2)).build()));
    Await.until("the first leader", Duration.ofSeconds(10), first::leader);
    withConnection(
        c -> {
          first
              .schedules()
              .create(
                  c,
                  ScheduleDefinition.of("rskip", daily, "rskipq").withMisfire(MisfirePolicy.SKIP),
                  null);
          first.schedules().create(c, ScheduleDefinition.of("ronce", daily, "ronceq"), null);
          first
              .schedules()
              .create(c, ScheduleDefinition.of("rcatch", daily, "rcatchq").catchingUp(3), null);
        });
    first.stop();
    // Four days pass with no leader: every JVM was down.
    db.update("UPDATE pgbus.schedule SET next_run_at = next_run_at - interval '5 days'");
    Engine second =
        engines.start(engines.builder(engines.config().leaderTtl(Duration.ofSeconds(2)).build()));
    Await.until("the new leader", Duration.ofSeconds(10), second::leader);
    Await.until(
        "the missed runs to be dealt with",
        Duration.ofSeconds(30),
        () -> db.queryLong("SELECT count(*) FROM pgbus.schedule WHERE next_run_at > now()"),
        n -> n == 3);
    assertThat(runs("rskipq")).as("skip: missed runs dropped").isEmpty();
    List<Instant> once = runs("ronceq");
    assertThat(once).as("run once: the latest missed run").hasSize(1);
    assertThat(runs("rcatchq"))
        .as("catch up: the latest three, oldest first")
        .containsExactly(
            once.get(0).minus(DAY.multipliedBy(2)), once.get(0).minus(DAY), once.get(0));
    assertThat(second.status().scheduleRunsEnqueued()).isEqualTo(4);
  }

  @Test
  void catchUpIsBoundedAndWalksNoFurtherThanItsLimit() {
    CronSchedule everySecond = CronSchedule.parse("* * * * * *", java.time.ZoneId.of("UTC"));
    // A year down with a run every second: only the latest 5 runs, found walking back.
    Instant next = DAY1_0300;
    Instant now = DAY1_0300.plus(Duration.ofDays(365)).plusMillis(500);
    List<Instant> runs =
        ScheduleEnqueuer.runsDue(everySecond, next, now, MisfirePolicy.CATCH_UP, 5);
    Instant latest = now.minusMillis(500);
    assertThat(runs)
        .containsExactly(
            latest.minusSeconds(4),
            latest.minusSeconds(3),
            latest.minusSeconds(2),
            latest.minusSeconds(1),
            latest);
    assertThat(
            ScheduleEnqueuer.runsDue(
                everySecond, latest.minusSeconds(1), now, MisfirePolicy.CATCH_UP, 5))
        .containsExactly(latest.minusSeconds(1), latest);
  }

  @Test
  void aChangeOnOneEngineWakesTheLeaderOnAnotherAtOnceThroughItsNotify() {
    // A ceiling far above the bound: only the NOTIFY can make the leader see the change in time.
    Duration ceiling = Duration.ofSeconds(60);
    Engine leader =
        engines.start(
            engines.builder(
                engines
                    .config()
                    .pollCeiling(ceiling)
                    .leaderTtl(Duration.ofSeconds(5))
                    // a capsule, for the LISTEN connection that hears the change
                    .capsule(new CapsuleConfig("sw", List.of("sw_unused"), 1))
                    .build()));
    Await.until("a leader", Duration.ofSeconds(10), leader::leader);
    TestEngines.awaitDelivering(leader);
    // Its first rounds (rescue, prune, schedules) are done: the next schedule tick is a ceiling
    // away.
    Await.until(
        "the first maintenance",
        Duration.ofSeconds(10),
        () -> leader.status().maintenanceRounds() >= 3);
    Engine other =
        engines.start(
            engines.builder(
                engines.config().pollCeiling(ceiling).leaderTtl(Duration.ofSeconds(5)).build()));
    assertThat(other.leader()).isFalse();
    Duration within = Duration.ofSeconds(15); // one run's period + load margin, a quarter ceiling

    withConnection(
        c ->
            other
                .schedules()
                .create(c, ScheduleDefinition.of("wake", "* * * * * *", "wakes"), "ops"));
    Await.until("a run of the new schedule", within, () -> runs("wakes").size(), n -> n >= 1);
    assertThat(leader.status().scheduleWakes()).isGreaterThanOrEqualTo(1);

    withConnection(
        c ->
            other
                .schedules()
                .update(c, ScheduleDefinition.of("wake", "* * * * * *", "wakes_moved"), "ops"));
    Await.until("a run to the new queue", within, () -> runs("wakes_moved").size(), n -> n >= 1);

    // Forged notifications (anyone may NOTIFY, with any payload): each only asks for a read, and
    // the leader reads at most once per gap however many arrive.
    long before = leader.status().scheduleWakes();
    long heardBefore = leader.status().scheduleChangesHeard();
    long started = System.nanoTime();
    db.queryLong(
        "SELECT count(*) FROM (SELECT pg_notify('pgbus-schedule', g::text || repeat('x', 100))"
            + " FROM generate_series(1, 500) g) n");
    for (int i = 0; i < 40; i++) {
      db.queryLong("SELECT count(*) FROM pg_notify('pgbus-schedule', '9223372036854775807')");
    }
    Await.until(
        "the forged notifications to be heard",
        Duration.ofSeconds(10),
        () -> leader.status().scheduleChangesHeard() - heardBefore,
        n -> n >= 540);
    Duration spent = Duration.ofNanos(System.nanoTime() - started);
    assertThat(leader.status().scheduleWakes() - before)
        .as("schedule reads for 540 notifications in %s", spent)
        .isLessThanOrEqualTo(spent.toMillis() / Maintainer.SCHEDULE_WAKE_GAP.toMillis() + 2);
    assertThat(leader.leader()).isTrue();
  }

  @Test
  void aScheduleMovedEarlierOrResumedByAPlainUpdateWakesTheLeaderWithinAWake() {
    // Issue #23: written straight to pgbus.schedule, not through the API, which sends its own
    // NOTIFY. With a 60 s ceiling only the trigger's NOTIFY brings the leader's read forward.
    Engine leader =
        engines.start(
            engines.builder(
                engines
                    .config()
                    .pollCeiling(Duration.ofSeconds(60))
                    .leaderTtl(Duration.ofSeconds(5))
                    .capsule(new CapsuleConfig("sw", List.of("sw_unused"), 1))
                    .build()));
    Await.until("a leader", Duration.ofSeconds(10), leader::leader);
    TestEngines.awaitDelivering(leader);
    withConnection(
        c -> {
          book.create(c, ScheduleDefinition.of("yearly", "0 0 1 1 *", "by_hand"), null);
          book.create(c, ScheduleDefinition.of("held", "0 0 1 1 *", "by_hand_resumed"), null);
          book.pause(c, "held", null);
        });
    Await.until(
        "the first maintenance",
        Duration.ofSeconds(10),
        () -> leader.status().maintenanceRounds() >= 3);
    Await.until(
        "the API's own notifications",
        Duration.ofSeconds(10),
        () -> leader.status().scheduleChangesHeard() >= 3);
    try {
      // The read they brought forward (at most a gap later) is done: the next one is a ceiling
      // away, unless something announces a change.
      Thread.sleep(Maintainer.SCHEDULE_WAKE_GAP.toMillis() * 4);
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    Duration within = Duration.ofSeconds(5);

    // Back to this year's run, missed: run once (the default misfire policy), now.
    db.update(
        "UPDATE pgbus.schedule SET next_run_at = date_trunc('year', now()) WHERE name = 'yearly'");
    Await.until("the run moved back", within, () -> runs("by_hand").size(), n -> n == 1);

    // Due while paused: nothing runs; then only the resume is written.
    db.update(
        "UPDATE pgbus.schedule SET next_run_at = date_trunc('year', now()) WHERE name = 'held'");
    long wakes = leader.status().scheduleWakes();
    Await.until(
        "the leader to read it", within, () -> leader.status().scheduleWakes(), n -> n > wakes);
    assertThat(runs("by_hand_resumed")).isEmpty();
    db.update("UPDATE pgbus.schedule SET paused = false WHERE name = 'held'");
    Await.until(
        "the run of the resumed schedule",
        within,
        () -> runs("by_hand_resumed").size(),
        n -> n == 1);
  }

  @Test
  void aSecondEngineSeesCreateUpdateAndDeleteWithinOnePollCeiling() {
    Duration ceiling = Duration.ofSeconds(1);
    Engine leader =
        engines.start(
            engines.builder(
                engines.config().pollCeiling(ceiling).leaderTtl(Duration.ofSeconds(1)).build()));
    Await.until("a leader", Duration.ofSeconds(10), leader::leader);
    // The other engine only stands for the JVM where an operator acts; it does not lead.
    Engine other =
        engines.start(
            engines.builder(
                engines.config().pollCeiling(ceiling).leaderTtl(Duration.ofSeconds(1)).build()));
    assertThat(other.leader()).isFalse();
    // The leader is idle, waiting out its ceiling: a change must be seen within it.
    Duration within = ceiling.plusSeconds(1).plusSeconds(3); // + one run's period + load margin

    withConnection(
        c ->
            other
                .schedules()
                .create(c, ScheduleDefinition.of("pulse", "* * * * * *", "pulses"), "ops"));
    Await.until("a run of the new schedule", within, () -> runs("pulses").size(), n -> n >= 1);

    withConnection(
        c ->
            other
                .schedules()
                .update(c, ScheduleDefinition.of("pulse", "* * * * * *", "pulses_moved"), "ops"));
    Await.until("a run to the new queue", within, () -> runs("pulses_moved").size(), n -> n >= 1);

    withConnection(c -> other.schedules().delete(c, "pulse", "ops"));
    int after = runs("pulses_moved").size();
    // A canary made after the delete proves the leader ticked since.
    withConnection(
        c ->
            other
                .schedules()
                .create(c, ScheduleDefinition.of("canary", "* * * * * *", "canary"), null));
    Await.until("a run of the canary", within, () -> runs("canary").size(), n -> n >= 2);
    assertThat(runs("pulses_moved")).hasSize(after);
    assertThat(runs("pulses")).doesNotHaveDuplicates();
    assertThat(other.status().scheduleRunsEnqueued()).isZero();
    // Neither engine has a LISTEN connection (no capsules): this is the ceiling without a NOTIFY,
    // as when one is lost.
    assertThat(leader.status().scheduleWakes()).isZero();
  }

  @Test
  void everyChangeAndTriggerIsAuditedWithWhoAndWhatInTheCallersTransaction() throws Exception {
    db.update("DELETE FROM pgbus.audit");
    try (Connection c = db.connect()) {
      book.create(c, ScheduleDefinition.of("audited", "@daily", "aq"), "alice");
      book.update(c, ScheduleDefinition.of("audited", "@hourly", "aq2"), "bob");
      assertThat(book.pause(c, "audited", "carol")).isTrue();
      assertThat(book.resume(c, "audited", "dave")).isTrue();
      assertThat(book.resume(c, "audited", "dave")).as("not paused: no change").isTrue();
      long job = book.trigger(c, "audited", "erin").getAsLong();
      assertThat(book.delete(c, "audited", "frank")).isTrue();
      assertThat(book.delete(c, "audited", "frank")).isFalse();
      assertThat(book.pause(c, "missing", "x")).isFalse();

      // A rolled-back change leaves no entry.
      c.setAutoCommit(false);
      book.create(c, ScheduleDefinition.of("audited", "@daily", "aq"), "mallory");
      book.trigger(c, "audited", "mallory");
      c.rollback();
      c.setAutoCommit(true);

      List<io.pgbus.AuditEntry> history = book.history(c, "audited", 100);
      assertThat(history)
          .extracting(io.pgbus.AuditEntry::action)
          .containsExactly(
              "schedule_delete",
              "schedule_trigger",
              "schedule_resume",
              "schedule_pause",
              "schedule_update",
              "schedule_create");
      assertThat(history)
          .extracting(io.pgbus.AuditEntry::actor)
          .containsExactly("frank", "erin", "dave", "carol", "bob", "alice");
      assertThat(history.get(1).jobId()).isEqualTo(job);
      assertThat(history.get(1).queue()).isEqualTo("aq2");
      assertThat(history.get(5).queue()).isEqualTo("aq");
      assertThat(history.get(0).at()).isAfter(Instant.now().minusSeconds(60));
      assertThat(book.history(c, "audited", 2)).hasSize(2);
      assertThat(book.history(c, "never", 10)).isEmpty();
      assertThatThrownBy(() -> book.history(c, "audited", 1001))
          .isInstanceOf(InvalidScheduleException.class)
          .hasMessageContaining("use 1 to 1000");
    }
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE schedule = 'audited'"
                    + " AND detail->>'cron' = '@hourly' AND action = 'schedule_update'"))
        .isEqualTo(1);

    // The configuration's crons, when the start creates or changes them.
    var tx = new JdbcTransactions(db.dataSource());
    new ScheduleEnqueuer(
            List.of(CronJob.of("fromconfig", "0 3 * * *", "reports")),
            store,
            tx,
            Duration.ofMinutes(1))
        .syncConfig(null);
    new ScheduleEnqueuer(
            List.of(CronJob.of("fromconfig", "0 3 * * *", "reports")),
            store,
            tx,
            Duration.ofMinutes(1))
        .syncConfig(null);
    new ScheduleEnqueuer(
            List.of(CronJob.of("fromconfig", "0 4 * * *", "reports")),
            store,
            tx,
            Duration.ofMinutes(1))
        .syncConfig(null);
    try (Connection c = db.connect()) {
      assertThat(book.history(c, "fromconfig", 10))
          .extracting(io.pgbus.AuditEntry::action)
          .as("an unchanged restart is no change")
          .containsExactly("schedule_update", "schedule_create");
    }
  }

  @Test
  void pauseStopsRunsResumeStartsAfterNowAndTriggerEnqueuesAtOnce() throws Exception {
    try (Connection c = db.connect()) {
      book.create(
          c,
          ScheduleDefinition.of("nightly", "0 3 * * *", "reports").catchingUp(10).withPriority(5),
          "ops");
      assertThat(book.pause(c, "nightly", "ops")).isTrue();
      assertThat(book.pause(c, "missing", "ops")).isFalse();
    }
    db.update("UPDATE pgbus.schedule SET next_run_at = ?", utc(DAY1_0300));
    ScheduleEnqueuer leader = enqueuer();
    try (Connection c = db.connect()) {
      assertThat(leader.tick(c, DAY1_0300.plus(DAY.multipliedBy(3))).enqueued()).isZero();

      OptionalLong job = book.trigger(c, "nightly", "ops");
      assertThat(job).isPresent();
      assertThat(book.trigger(c, "missing", "ops")).isEmpty();
      assertThat(db.job(job.getAsLong()).state()).isEqualTo("available");

      assertThat(book.resume(c, "nightly", "ops")).isTrue();
      Schedule resumed = book.get(c, "nightly").orElseThrow();
      assertThat(resumed.paused()).isFalse();
      assertThat(resumed.nextRun()).isAfter(Instant.now().minusSeconds(1));
      assertThat(resumed.lastRun()).as("a trigger is no run").isNull();
      assertThat(resumed.updatedBy()).isEqualTo("ops");
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'reports'")).isEqualTo(1);
    assertThat(db.queryLong("SELECT priority FROM pgbus.job WHERE queue = 'reports'")).isEqualTo(5);
  }

  @Test
  void badInputIsRefusedWithTheValueAndTheFixAndWritesNothing() throws Exception {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThatThrownBy(
              () -> book.create(c, ScheduleDefinition.of("bad", "61 * * * *", "q"), null))
          .isInstanceOf(InvalidScheduleException.class)
          .hasMessageContaining("schedule 'bad': invalid cron schedule '61 * * * *'")
          .hasMessageContaining("use 5 fields");
      assertThatThrownBy(() -> ScheduleDefinition.of("bad", "@daily", "q").inZone("Mars/Olympus"))
          .isInstanceOf(InvalidScheduleException.class)
          .hasMessageContaining("unknown time zone 'Mars/Olympus'")
          .hasMessageContaining("use an IANA zone such as 'Europe/Berlin'");
      assertThatThrownBy(() -> ScheduleDefinition.of("bad name", "@daily", "q"))
          .hasMessageContaining("invalid schedule name 'bad name'");
      assertThatThrownBy(() -> ScheduleDefinition.of("ok", "@daily", "Bad-Queue"))
          .hasMessageContaining("invalid queue name");
      assertThatThrownBy(() -> ScheduleDefinition.of("ok", "@daily", "q").catchingUp(1001))
          .hasMessageContaining("catch-up limit 1001 is out of range: use 1 to 1000");
      assertThatThrownBy(
              () -> ScheduleDefinition.of("ok", "@daily", "q").withPayloadJson("x".repeat(70_000)))
          .hasMessageContaining("the payload has 70000 bytes: use at most 65536");
      // The caller's transaction is still usable, and holds nothing.
      book.create(c, ScheduleDefinition.of("good", "@daily", "q"), null);
      assertThatThrownBy(() -> book.create(c, ScheduleDefinition.of("good", "@hourly", "q"), null))
          .hasMessageContaining("schedule 'good' exists already");
      c.rollback();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schedule")).isZero();
  }

  @Test
  void theDatabaseEnforcesTheSameBounds() {
    for (String insert :
        List.of(
            "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
                + " VALUES ('bad name', '@daily', 'UTC', 'q', '{}', 'api')",
            "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, misfire)"
                + " VALUES ('n', '@daily', 'UTC', 'q', '{}', 'api', 'catch_up')",
            "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, misfire,"
                + " catch_up_limit) VALUES ('n', '@daily', 'UTC', 'q', '{}', 'api', 'catch_up',"
                + " 1001)",
            "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
                + " VALUES ('n', '@daily', 'UTC', 'q', jsonb_build_object('x', repeat('y',"
                + " 70000)), 'api')")) {
      assertThatThrownBy(() -> db.update(insert))
          .hasStackTraceContaining("violates check constraint");
    }
  }

  @Test
  void aBadScheduleRowStopsNoOtherSchedule() throws Exception {
    try (Connection c = db.connect()) {
      book.create(c, ScheduleDefinition.of("pulse", "* * * * * *", "pulses"), null);
    }
    db.update("UPDATE pgbus.schedule SET next_run_at = ? WHERE name = 'pulse'", utc(DAY1_0300));
    // What an older release, or a superuser past the constraint, could leave: an unknown zone
    // (the constraint is dropped and put back NOT VALID, as V23 leaves a row written before it),
    // and an expression of cron's shape that does not parse (the constraint lets it pass).
    withBadRows(DAY1_0300);

    var warnings = new ArrayList<String>();
    java.util.logging.Logger log =
        java.util.logging.Logger.getLogger(ScheduleEnqueuer.class.getName());
    var handler =
        new java.util.logging.Handler() {
          @Override
          public void publish(java.util.logging.LogRecord r) {
            if (r.getLevel() == java.util.logging.Level.WARNING) {
              synchronized (warnings) {
                warnings.add(String.valueOf(r.getParameters()[0]));
              }
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    log.addHandler(handler);
    ScheduleEnqueuer leader = enqueuer();
    try (Connection c = db.connect()) {
      for (int s = 0; s < 5; s++) {
        ScheduleEnqueuer.Tick t = leader.tick(c, DAY1_0300.plusSeconds(s).plusMillis(100));
        assertThat(t.enqueued()).as("the valid schedule's run at second %d", s).isEqualTo(1);
        assertThat(t.untilNext())
            .as("the bad rows, due since the start, do not make the ticks follow at once")
            .isEqualTo(Duration.ofMillis(900));
      }
    } finally {
      log.removeHandler(handler);
    }
    assertThat(runs("pulses")).hasSize(5);
    assertThat(runs("badq")).isEmpty();
    assertThat(warnings)
        .as("each bad row is logged once, not at every tick")
        .containsExactlyInAnyOrder("badzone", "badcron");

    try (Connection c = db.connect()) {
      // Listed and read, marked with what is wrong; the good one is not.
      List<Schedule> all = book.list(c, null, 10);
      assertThat(all).extracting(Schedule::name).containsExactly("badcron", "badzone", "pulse");
      assertThat(all.get(0).problem()).contains("invalid cron schedule '61 * * * *'");
      assertThat(all.get(1).problem()).contains("unknown time zone 'Mars/Olympus'");
      assertThat(all.get(1).definition().zone()).isEqualTo("Mars/Olympus");
      assertThat(all.get(2).problem()).isNull();
      assertThat(book.get(c, "badzone").orElseThrow().readable()).isFalse();
      assertThatThrownBy(() -> book.trigger(c, "badzone", null))
          .isInstanceOf(InvalidScheduleException.class)
          .hasMessageContaining("cannot trigger schedule 'badzone'");

      Doctor.Check check = Doctor.schedules(c);
      assertThat(check.status()).isEqualTo(Doctor.Status.WARN);
      assertThat(check.detail())
          .contains("2 of 3 schedule(s) cannot run")
          .contains("Mars/Olympus")
          .contains("61 * * * *");

      // Deleted through the API, and fixed through it.
      assertThat(book.delete(c, "badzone", null)).isTrue();
      assertThat(
              book.update(c, ScheduleDefinition.of("badcron", "1 * * * *", "badq"), null)
                  .orElseThrow()
                  .readable())
          .isTrue();
      assertThat(Doctor.schedules(c).status()).isEqualTo(Doctor.Status.OK);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schedule")).isEqualTo(2);
  }

  @Test
  void theDatabaseRefusesAnUnknownZoneAndACronOfTheWrongShapeNamingTheValue() {
    String insert =
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
            + " VALUES ('n', ?, ?, 'q', '{}', 'api')";
    assertThatThrownBy(() -> db.update(insert, "@daily", "Mars/Olympus"))
        .hasStackTraceContaining("unknown time zone 'Mars/Olympus' for a schedule");
    assertThatThrownBy(() -> db.update(insert, "every day at 3", "UTC"))
        .hasStackTraceContaining("invalid cron expression 'every day at 3' for a schedule");
    assertThatThrownBy(() -> db.update(insert, "0 3 * * * * *", "UTC"))
        .hasStackTraceContaining("invalid cron expression");
    // Every zone java.time takes, PostgreSQL takes: an older release's writes still pass.
    int i = 0;
    for (String zone : List.of("Europe/Berlin", "UTC", "Z", "+02:00", "GMT+1", "Etc/GMT-14")) {
      java.time.ZoneId.of(zone);
      for (String cron : List.of("@daily", "0 3 * * MON-FRI", "0 0 12 ? * 5#3", "0 0 0 LW * ?")) {
        CronSchedule.parse(cron, java.time.ZoneId.of("UTC"));
        db.update(
            "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source)"
                + " VALUES (?, ?, ?, 'q', '{}', 'api')",
            "ok" + i++,
            cron,
            zone);
      }
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schedule")).isEqualTo(24);
  }

  /** Rows the constraints of V23 would refuse now, as a row written before them. */
  private static void withBadRows(Instant due) {
    db.update("ALTER TABLE pgbus.schedule DROP CONSTRAINT schedule_zone_known_chk");
    try {
      db.update(
          "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, next_run_at)"
              + " VALUES ('badzone', '* * * * * *', 'Mars/Olympus', 'badq', '{}', 'api', ?)",
          utc(due));
    } finally {
      db.update(
          "ALTER TABLE pgbus.schedule ADD CONSTRAINT schedule_zone_known_chk"
              + " CHECK (pgbus.schedule_zone_valid(zone)) NOT VALID");
    }
    db.update(
        "INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, next_run_at)"
            + " VALUES ('badcron', '61 * * * *', 'UTC', 'badq', '{}', 'api', ?)",
        utc(due));
  }

  @Test
  void aRolledBackChangeLeavesNoTrace() throws Exception {
    try (Connection c = db.connect()) {
      book.create(c, ScheduleDefinition.of("kept", "@daily", "q"), null);
      c.setAutoCommit(false);
      book.update(c, ScheduleDefinition.of("kept", "@hourly", "other"), null);
      book.pause(c, "kept", null);
      book.create(c, ScheduleDefinition.of("gone", "@daily", "q"), null);
      book.trigger(c, "kept", null);
      c.rollback();
      Schedule kept = book.get(c, "kept").orElseThrow();
      assertThat(kept.definition().cron()).isEqualTo("@daily");
      assertThat(kept.definition().queue()).isEqualTo("q");
      assertThat(kept.paused()).isFalse();
      assertThat(book.get(c, "gone")).isEmpty();
    }
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void configuredCronsAreStoredAtStartUpdatedWhenChangedAndKeptWhenRemoved() throws Exception {
    // A cron that ran before V15: it goes on after its recorded run.
    db.update("INSERT INTO pgbus.cron (name, last_run_at) VALUES ('nightly', ?)", utc(DAY1_0300));
    var tx = new JdbcTransactions(db.dataSource());
    var v1 =
        new ScheduleEnqueuer(
            List.of(CronJob.of("nightly", "0 3 * * *", "reports")),
            store,
            tx,
            Duration.ofMinutes(1));
    assertThat(v1.syncConfig(DAY1_0300.plusSeconds(10))).isEqualTo(1);
    assertThat(v1.syncConfig(DAY1_0300.plusSeconds(20))).as("a restart changes nothing").isZero();
    Schedule s = book(b -> b.get("nightly"));
    assertThat(s.source()).isEqualTo("config");
    assertThat(s.nextRun()).isEqualTo(DAY1_0300.plus(DAY));
    assertThat(s.definition().misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);

    var v2 =
        new ScheduleEnqueuer(
            List.of(CronJob.of("nightly", "0 4 * * *", "reports")),
            store,
            tx,
            Duration.ofMinutes(1));
    assertThat(v2.syncConfig(DAY1_0300.plusSeconds(30))).isEqualTo(1);
    assertThat(book(b -> b.get("nightly")).nextRun()).isEqualTo(DAY1_0300.plusSeconds(3600));

    var v3 = new ScheduleEnqueuer(List.of(), store, tx, Duration.ofMinutes(1));
    assertThat(v3.syncConfig(DAY1_0300.plusSeconds(40))).isZero();
    assertThat(book(b -> b.get("nightly")).definition().cron()).isEqualTo("0 4 * * *");
  }

  @Test
  void aConfiguredCronKeepsItsMisfirePolicyAcrossALeaderChange() throws Exception {
    var tx = new JdbcTransactions(db.dataSource());
    List<CronJob> crons =
        List.of(
            CronJob.of("cskip", "0 3 * * *", "cskipq").withMisfire("skip"),
            CronJob.of("conce", "0 3 * * *", "conceq"),
            CronJob.of("ccatch", "0 3 * * *", "ccatchq").withMisfire("catch-up:2"));
    var first = new ScheduleEnqueuer(crons, store, tx, Duration.ofMinutes(1));
    assertThat(first.syncConfig(DAY1_0300.minusSeconds(10))).isEqualTo(3);
    assertThat(book(b -> b.get("ccatch")).definition().catchUpLimit()).isEqualTo(2);
    assertThat(book(b -> b.get("cskip")).definition().misfire()).isEqualTo(MisfirePolicy.SKIP);
    try (Connection c = db.connect()) {
      assertThat(first.tick(c, DAY1_0300.plusMillis(20)).enqueued()).isEqualTo(3);
    }
    // The leader dies; another JVM, with the same configuration, leads an hour past day 5.
    var second = new ScheduleEnqueuer(crons, store, tx, Duration.ofMinutes(1));
    Instant day5 = DAY1_0300.plus(DAY.multipliedBy(4));
    try (Connection c = db.connect()) {
      assertThat(second.tick(c, day5.plusSeconds(3600)).enqueued()).isEqualTo(0 + 1 + 2);
    }
    assertThat(runs("cskipq")).containsExactly(DAY1_0300);
    assertThat(runs("conceq")).containsExactly(DAY1_0300, day5);
    assertThat(runs("ccatchq")).containsExactly(DAY1_0300, day5.minus(DAY), day5);

    // A policy changed in the configuration is a change: stored at the next start.
    var third =
        new ScheduleEnqueuer(
            List.of(CronJob.of("cskip", "0 3 * * *", "cskipq").withMisfire("catch-up:7")),
            store,
            tx,
            Duration.ofMinutes(1));
    assertThat(third.syncConfig(day5.plusSeconds(3700))).isEqualTo(1);
    assertThat(book(b -> b.get("cskip")).definition().catchUpLimit()).isEqualTo(7);
    assertThatThrownBy(() -> CronJob.of("bad", "@daily", "q").withMisfire("later"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.cron.bad.misfire=later is invalid");
  }

  private interface BookCall<T> {
    java.util.Optional<T> call(BookOn b) throws Exception;
  }

  /** The book bound to a fresh connection. */
  private final class BookOn {
    private final Connection c;

    BookOn(Connection c) {
      this.c = c;
    }

    java.util.Optional<Schedule> get(String name) {
      return book.get(c, name);
    }
  }

  private <T> T book(BookCall<T> call) throws Exception {
    try (Connection c = db.connect()) {
      return call.call(new BookOn(c)).orElseThrow();
    }
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

  private ScheduleEnqueuer enqueuer() {
    return new ScheduleEnqueuer(
        List.of(), store, new JdbcTransactions(db.dataSource()), ScheduleEnqueuer.MAX_WAIT);
  }

  private static OffsetDateTime utc(Instant t) {
    return OffsetDateTime.ofInstant(t, ZoneOffset.UTC);
  }

  /** The run_at of every job of a queue, by id; a scheduled job's run_at is the run it is for. */
  private static List<Instant> runs(String queue) {
    try (Connection c = db.helperConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT run_at FROM pgbus.job WHERE queue = ? ORDER BY run_at")) {
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
  void aScheduleThatNeverFiresIsRefusedAtCreateAndUpdateAndNothingIsWritten() throws Exception {
    try (Connection c = db.connect()) {
      assertThatThrownBy(
              () -> book.create(c, ScheduleDefinition.of("feb31", "0 0 31 2 *", "febq"), "ops"))
          .isInstanceOf(io.pgbus.InvalidScheduleException.class)
          .hasMessageContaining("schedule 'feb31': the cron schedule '0 0 31 2 *' never fires");
      book.create(c, ScheduleDefinition.of("monthly", "@monthly", "mq"), "ops");
      assertThatThrownBy(
              () -> book.update(c, ScheduleDefinition.of("monthly", "0 0 30 2 *", "mq"), "ops"))
          .isInstanceOf(io.pgbus.InvalidScheduleException.class)
          .hasMessageContaining("'0 0 30 2 *' never fires");
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schedule WHERE name = 'feb31'")).isZero();
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.schedule WHERE name = 'monthly' AND cron = '@monthly'"))
        .isEqualTo(1);
  }
}

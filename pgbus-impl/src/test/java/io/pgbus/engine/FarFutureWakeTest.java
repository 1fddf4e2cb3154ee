package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A wake far in the future, forged or real, must not stop a claim loop (issue #10, finding 1): any
 * database login may NOTIFY any channel, and a job may be due centuries ahead when it was inserted
 * past the Java checks. The capsule saturates its alarm, and the notifier reads an absurd or
 * garbled payload as "look now".
 */
class FarFutureWakeTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final String QUEUE = "farfuture";

  @Test
  void farFutureNotifyDoesNotStopTheCapsule() {
    var events = new RecordingEvents();
    Engine engine = start(events);

    notify(QUEUE, "9223372036854775807");
    Await.until(
        "the forged notification to arrive",
        Duration.ofSeconds(10),
        () -> engine.notifier().notifications() >= 1);

    long id = JobFixtures.in(db).enqueue(QUEUE);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(engine.capsules().get(0).status().stall(Duration.ofSeconds(1))).isNull();
  }

  @Test
  void garbageNotifyPayloadsAreReadAsLookNow() {
    var events = new RecordingEvents();
    Engine engine = start(events);
    String[] payloads = {
      "-9223372036854775808",
      "-1",
      "0",
      "not a number",
      "1e400",
      "99999999999999999999999",
      "   ",
      Long.toString(Instant.now().plus(365 * 101, ChronoUnit.DAYS).toEpochMilli())
    };
    for (String p : payloads) {
      notify(QUEUE, p);
    }
    Await.until(
        "every forged notification to arrive",
        Duration.ofSeconds(10),
        () -> engine.notifier().notifications() >= payloads.length);

    long id = JobFixtures.in(db).enqueue(QUEUE);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
  }

  @Test
  void jobDueInYear2400DoesNotStopTheCapsule() {
    // Straight into the table, past every Java check: as an old client, a hand-written INSERT or
    // a restored backup could leave it. The ticker reads it as the queue's next due time, more
    // than the 292 years a Duration of nanoseconds can hold.
    insertBypassingJava("2400-01-01T00:00:00Z");
    var events = new RecordingEvents();
    Engine engine = start(events);
    Await.until(
        "the ticker to read the far-future head",
        Duration.ofSeconds(10),
        () -> engine.status().ticks(),
        p -> p >= 1);

    long id = JobFixtures.in(db).enqueue(QUEUE);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(db.jobCount(QUEUE, "scheduled")).as("the far-future job waits on").isEqualTo(1);
  }

  @Test
  void jobDueAtInfinityDoesNotStopTheCapsule() {
    insertBypassingJava("infinity");
    var events = new RecordingEvents();
    Engine engine = start(events);
    Await.until(
        "the ticker to read the head",
        Duration.ofSeconds(10),
        () -> engine.status().ticks(),
        p -> p >= 1);

    long id = JobFixtures.in(db).enqueue(QUEUE);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(engine.capsules().get(0).status().stall(Duration.ofSeconds(1))).isNull();
  }

  @Test
  void aNotifyPayloadIsTrustedOnlyWithinTheScheduleHorizon() {
    Instant now = Instant.parse("2026-12-01T00:00:00Z");
    Instant inAnHour = now.plus(Duration.ofHours(1));
    Instant inNinetyYears = now.plus(Duration.ofDays(365 * 90));

    assertThat(Notifier.parseDue(Long.toString(inAnHour.toEpochMilli()), now)).isEqualTo(inAnHour);
    assertThat(Notifier.parseDue(Long.toString(inNinetyYears.toEpochMilli()), now))
        .isEqualTo(inNinetyYears);
    assertThat(Notifier.parseDue("9223372036854775807", now)).as("beyond the horizon").isNull();
    assertThat(Notifier.parseDue("-9223372036854775808", now)).as("long ago").isNull();
    assertThat(Notifier.parseDue(Long.toString(now.toEpochMilli() - 1), now)).as("past").isNull();
    assertThat(Notifier.parseDue("garbage", now)).isNull();
  }

  @Test
  void anAlarmSaturatesInsteadOfOverflowing() {
    Instant now = Instant.parse("2026-12-01T00:00:00Z");
    long max = Duration.ofSeconds(5).toNanos();

    assertThat(ClaimReasons.nanosUntil(now, Instant.ofEpochMilli(Long.MAX_VALUE), max))
        .isEqualTo(max);
    assertThat(ClaimReasons.nanosUntil(now, Instant.MAX, max)).isEqualTo(max);
    assertThat(ClaimReasons.nanosUntil(now, Instant.MIN, max)).isZero();
    assertThat(ClaimReasons.nanosUntil(now, now.plusMillis(20), max))
        .isEqualTo(Duration.ofMillis(20).toNanos());
    assertThat(ClaimReasons.nanosUntil(now, null, max)).isEqualTo(max);
  }

  private Engine start(RecordingEvents events) {
    Engine engine =
        engines.start(
            engines
                .builder(engines.config().capsule("main", 2, QUEUE).build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    return engine;
  }

  /**
   * A scheduled job due at {@code runAt}, inserted straight into the table. Should the schema
   * itself refuse such a time (a check on run_at), no such job can exist and there is nothing to
   * test.
   */
  private static void insertBypassingJava(String runAt) {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO pgbus.job (queue, state, payload, run_at)"
                    + " VALUES (?, 'scheduled', '{}', ?::timestamptz)")) {
      ps.setString(1, QUEUE);
      ps.setString(2, runAt);
      ps.executeUpdate();
    } catch (SQLException e) {
      Assumptions.assumeFalse(
          "23514".equals(e.getSQLState()) || "22023".equals(e.getSQLState()),
          "the schema refuses run_at " + runAt + ": " + e.getMessage());
      throw new IllegalStateException(e);
    }
  }

  private static void notify(String queue, String payload) {
    db.queryLong("SELECT count(*) FROM (SELECT pg_notify('pgbus_' || ?, ?)) sent", queue, payload);
  }
}

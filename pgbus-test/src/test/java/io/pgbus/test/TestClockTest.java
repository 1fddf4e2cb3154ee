package io.pgbus.test;

import static io.pgbus.test.PgbusAssertions.enqueued;
import static io.pgbus.test.PgbusAssertions.requireEnqueued;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.test.Payloads.Order;
import io.pgbus.test.Payloads.OrderHandler;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TestClockTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private final JobQueue jobs = PgbusTest.jobQueue(db.dataSource());

  @BeforeEach
  void emptyQueues() {
    PgbusTest.reset(db.dataSource());
  }

  @Test
  void theClockStandsStillUntilAdvancedAndNeverGoesBack() throws Exception {
    TestClock clock = TestClock.of(db.dataSource());
    Instant start = clock.instant();
    Thread.sleep(20); // the real clock moves; this one does not

    assertThat(clock.instant()).isEqualTo(start);
    assertThat(Duration.between(start, Instant.now()).abs()).isLessThan(Duration.ofMinutes(1));
    clock.advance(Duration.ofMinutes(5));
    assertThat(clock.instant()).isEqualTo(start.plus(Duration.ofMinutes(5)));
    assertThat(clock.withZone(ZoneId.of("Europe/Zurich")).instant()).isEqualTo(clock.instant());
    assertThatThrownBy(() -> clock.advance(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("only moves forward");
    assertThatThrownBy(() -> clock.advanceTo(start))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("only moves forward");
  }

  @Test
  void aDelayedJobIsDueOnlyOnceTheClockHasPassedItsDelay() {
    TestClock clock = TestClock.of(db.dataSource());
    var handler = new OrderHandler();
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(handler).clock(clock).build();
    jobs.enqueue(
        "orders", new Order(1, "ada"), EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
    // An instant computed from the clock, as code under test given the clock would.
    jobs.enqueue(
        "orders",
        new Order(2, "grace"),
        EnqueueOptions.defaults().withRunAt(clock.instant().plus(Duration.ofHours(2))));

    assertThat(worker.drain("orders").count()).isZero();
    assertThat(clock.advance(Duration.ofMinutes(59))).isEqualTo(2);
    assertThat(worker.drain("orders").count()).isZero();
    clock.advance(Duration.ofMinutes(2));
    assertThat(worker.drain("orders").completed()).isEqualTo(1);
    assertThat(handler.handled).containsExactly(new Order(1, "ada"));
    clock.advanceTo(clock.instant().plus(Duration.ofHours(1)));
    assertThat(worker.drain("orders").completed()).isEqualTo(1);
    assertThat(handler.handled).containsExactly(new Order(1, "ada"), new Order(2, "grace"));
  }

  @Test
  void anAdvanceMovesOnlyWaitingJobsAndLeavesFinishedOnesAsTheyWere() {
    TestClock clock = TestClock.of(db.dataSource());
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(new OrderHandler()).build();
    long done = jobs.enqueue("orders", new Order(1, "ada"));
    worker.drain("orders");
    long waiting =
        jobs.enqueue(
            "orders",
            new Order(2, "grace"),
            EnqueueOptions.defaults().withDelay(Duration.ofDays(2)));
    EnqueuedJob doneBefore = PgbusAssertions.job(db.dataSource(), done);
    EnqueuedJob waitingBefore = PgbusAssertions.job(db.dataSource(), waiting);

    assertThat(clock.advance(Duration.ofDays(1))).isEqualTo(1);

    assertThat(PgbusAssertions.job(db.dataSource(), done)).isEqualTo(doneBefore);
    EnqueuedJob waitingAfter = PgbusAssertions.job(db.dataSource(), waiting);
    assertThat(waitingAfter.runAt()).isEqualTo(waitingBefore.runAt().minus(Duration.ofDays(1)));
    assertThat(waitingAfter.createdAt()).isEqualTo(waitingBefore.createdAt());
    assertThat(waitingAfter.state()).isEqualTo("scheduled");
  }

  @Test
  void cronRunsAreEnqueuedAtTheClocksInstantAndAreDueAtOnce() {
    TestClock clock = TestClock.of(db.dataSource());
    var handler = new OrderHandler();
    TestWorker worker =
        TestWorker.builder(db.dataSource())
            .handler(handler)
            .clock(clock)
            .cron("hourly", "0 * * * *", "orders", new Order(9, "cron"))
            .build();

    assertThat(worker.runCrons()).as("the first tick records the start").isZero();
    Instant nextHour = clock.instant().truncatedTo(ChronoUnit.HOURS).plus(Duration.ofHours(1));
    clock.advanceTo(nextHour.minusSeconds(1));
    assertThat(worker.runCrons()).isZero();

    clock.advance(Duration.ofSeconds(1));
    assertThat(worker.runCrons()).isEqualTo(1);
    assertThat(worker.runCrons()).as("a run is enqueued once").isZero();
    requireEnqueued(
        db.dataSource(),
        "orders",
        new Order(9, "cron"),
        Expect.any().uniqueKey("cron:hourly:" + nextHour));
    assertThat(worker.drain("orders").completed()).isEqualTo(1);

    // Three hours later: only the latest missed run, as after downtime.
    clock.advance(Duration.ofHours(3));
    assertThat(worker.runCrons()).isEqualTo(1);
    assertThat(enqueued(db.dataSource(), "orders"))
        .extracting(EnqueuedJob::uniqueKey)
        .containsExactly(
            "cron:hourly:" + nextHour, "cron:hourly:" + nextHour.plus(Duration.ofHours(3)));
    assertThat(worker.drain("orders").completed()).isEqualTo(1);
    assertThat(handler.handled).hasSize(2);
  }

  @Test
  void runCronsWithoutAClockSaysHowToGiveOne() {
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(new OrderHandler()).build();

    assertThatThrownBy(worker::runCrons)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(".clock(TestClock.of(dataSource))");
  }
}

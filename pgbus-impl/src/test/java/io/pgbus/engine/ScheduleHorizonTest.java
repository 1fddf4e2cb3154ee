package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A job may be due at most {@link EnqueueOptions#MAX_SCHEDULE_AHEAD} (100 years) ahead, on every
 * Java path: a delay, a runAt (against the clock at enqueue), a snooze, and a retry backoff, which
 * saturates rather than overflows. The refusals name the value, the bound and what to do.
 */
class ScheduleHorizonTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final Duration JUST_BEYOND = EnqueueOptions.MAX_SCHEDULE_AHEAD.plusDays(1);

  private Engine engine;

  @BeforeEach
  void engine() {
    db.update("DELETE FROM pgbus.job");
    engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
  }

  @Test
  void theHorizonIsOneHundredYears() {
    assertThat(EnqueueOptions.MAX_SCHEDULE_AHEAD).isEqualTo(Duration.ofDays(36_500));
  }

  @Test
  void aDelayUpToTheHorizonIsAcceptedAndOneBeyondItIsRefusedNamingTheBound() {
    assertThat(EnqueueOptions.defaults().withDelay(EnqueueOptions.MAX_SCHEDULE_AHEAD).delay())
        .isEqualTo(EnqueueOptions.MAX_SCHEDULE_AHEAD);

    assertThatThrownBy(() -> EnqueueOptions.defaults().withDelay(JUST_BEYOND))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("delay " + JUST_BEYOND)
        .hasMessageContaining("at most 36500 days (100 years")
        .hasMessageContaining("MAX_SCHEDULE_AHEAD");
    assertThatThrownBy(
            () -> EnqueueOptions.defaults().withDelay(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(InvalidJobException.class);
  }

  @Test
  void aRunAtBeyondTheHorizonIsRefusedAtEnqueueAndWritesNothing() throws Exception {
    Instant tooLate = Instant.now().plus(JUST_BEYOND);
    NewJob job = new NewJob("later", "{}", EnqueueOptions.defaults().withRunAt(tooLate));

    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> engine.jobs().enqueue(c, job))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("runAt " + tooLate)
          .hasMessageContaining("queue 'later'")
          .hasMessageContaining("at most 36500 days");
      assertThatThrownBy(() -> engine.jobs().enqueueAll(c, List.of(job)))
          .isInstanceOf(InvalidJobException.class);
    }
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void aRunAtWithinTheHorizonIsEnqueued() throws Exception {
    Instant ninetyYears = Instant.now().plus(Duration.ofDays(365 * 90));
    try (Connection c = db.connect()) {
      engine
          .jobs()
          .enqueue(c, new NewJob("later", "{}", EnqueueOptions.defaults().withRunAt(ninetyYears)));
    }
    assertThat(db.jobCount("later", "scheduled")).isEqualTo(1);
  }

  @Test
  void aSnoozeBeyondTheHorizonIsRefusedNamingTheBound() {
    assertThat(Outcome.snooze(EnqueueOptions.MAX_SCHEDULE_AHEAD).delay())
        .isEqualTo(EnqueueOptions.MAX_SCHEDULE_AHEAD);
    assertThatThrownBy(() -> Outcome.snooze(JUST_BEYOND))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("snooze delay " + JUST_BEYOND)
        .hasMessageContaining("at most 36500 days");
  }

  @Test
  void aRetryBackoffSaturatesAtTheHorizonWhateverTheCapOrAttempt() {
    var huge = new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(Long.MAX_VALUE), 0.2);
    var hugeBase =
        new RetryPolicy(Duration.ofSeconds(Long.MAX_VALUE), Duration.ofSeconds(Long.MAX_VALUE), 0);

    for (int attempt : new int[] {1, 30, 62, 63, 1000, Integer.MAX_VALUE}) {
      assertThat(huge.backoff(attempt)).isLessThanOrEqualTo(EnqueueOptions.MAX_SCHEDULE_AHEAD);
      assertThat(hugeBase.backoff(attempt)).isEqualTo(EnqueueOptions.MAX_SCHEDULE_AHEAD);
    }
    assertThat(huge.backoff(1000)).isGreaterThan(Duration.ofDays(365 * 79));
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Backoff is exponential, jittered within its bounds, and never above the cap. No database. */
class RetryPolicyTest {

  private static final int SAMPLES = 2_000;

  @Test
  void everyBackoffStaysWithinTheJitteredExponentialBoundsAndTheCap() {
    var policy = new RetryPolicy(Duration.ofSeconds(1), Duration.ofMinutes(10), 0.2);

    for (int attempt = 1; attempt <= 40; attempt++) {
      long expected = Math.min(600_000L, 1000L << Math.min(attempt - 1, 30));
      long low = (long) Math.floor(expected * 0.8);
      long high = Math.min(600_000L, (long) Math.ceil(expected * 1.2));
      for (int i = 0; i < SAMPLES; i++) {
        long ms = policy.backoff(attempt).toMillis();
        assertThat(ms).as("attempt %d", attempt).isBetween(low, high);
      }
    }
  }

  @Test
  void jitterActuallySpreadsTheRetries() {
    var policy = new RetryPolicy(Duration.ofSeconds(1), Duration.ofHours(1), 0.2);

    long min = Long.MAX_VALUE;
    long max = 0;
    for (int i = 0; i < SAMPLES; i++) {
      long ms = policy.backoff(3).toMillis();
      min = Math.min(min, ms);
      max = Math.max(max, ms);
    }

    // 4 s +-20%: two thousand draws cover most of [3.2 s, 4.8 s].
    assertThat(min).isLessThan(3_400);
    assertThat(max).isGreaterThan(4_600);
  }

  @Test
  void withoutJitterTheBackoffDoublesUntilTheCap() {
    var policy = new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(1), 0);

    assertThat(policy.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(policy.backoff(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(policy.backoff(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(policy.backoff(5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.backoff(1000)).isEqualTo(Duration.ofSeconds(1));
    assertThat(policy.backoff(Integer.MAX_VALUE)).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aCapAtTheMaximumDurationDoesNotOverflow() {
    var policy = new RetryPolicy(Duration.ofSeconds(1), Duration.ofDays(365 * 1000L), 0.5);

    for (int attempt = 1; attempt <= 100; attempt++) {
      assertThat(policy.backoff(attempt)).isPositive().isLessThanOrEqualTo(policy.cap());
    }
  }

  @Test
  void refusesContradictoryPolicies() {
    assertThatThrownBy(() -> new RetryPolicy(Duration.ZERO, Duration.ofSeconds(1), 0.1))
        .hasMessageContaining("base");
    assertThatThrownBy(() -> new RetryPolicy(Duration.ofSeconds(2), Duration.ofSeconds(1), 0.1))
        .hasMessageContaining("cap");
    assertThatThrownBy(() -> new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0))
        .hasMessageContaining("jitter");
    assertThatThrownBy(() -> new RetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(1), -0.1))
        .hasMessageContaining("jitter");
  }
}

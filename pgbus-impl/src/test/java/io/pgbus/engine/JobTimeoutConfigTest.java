package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The job timeout defaults to a bit below the lease, follows it, and must stay below it. */
class JobTimeoutConfigTest {

  @Test
  void defaultsToNinetyPercentOfTheLease() {
    assertThat(EngineConfig.builder().build().execution().jobTimeout())
        .isEqualTo(Duration.ofSeconds(270));
    assertThat(
            EngineConfig.builder().lease(Duration.ofSeconds(10)).build().execution().jobTimeout())
        .isEqualTo(Duration.ofSeconds(9));
  }

  @Test
  void anExplicitTimeoutWins() {
    assertThat(
            EngineConfig.builder()
                .jobTimeout(Duration.ofSeconds(5))
                .build()
                .execution()
                .jobTimeout())
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void refusesATimeoutThatIsNotShorterThanTheLease() {
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .lease(Duration.ofMinutes(1))
                    .jobTimeout(Duration.ofMinutes(1))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(
            "pgbus.job-timeout=1m is invalid: it must be shorter than pgbus.lease=1m");
    assertThatThrownBy(() -> EngineConfig.builder().jobTimeout(Duration.ZERO).build())
        .hasMessageContaining("pgbus.job-timeout must be positive");
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The job timeout defaults to a bit below the lease, follows it, and must stay below it. */
class JobTimeoutConfigTest {

  @Test
  void defaultsToNinetyPercentOfTheLease() {
    assertThat(EngineConfig.builder().build().jobTimeout()).isEqualTo(Duration.ofSeconds(270));
    assertThat(EngineConfig.builder().lease(Duration.ofSeconds(10)).build().jobTimeout())
        .isEqualTo(Duration.ofSeconds(9));
  }

  @Test
  void anExplicitTimeoutWins() {
    assertThat(EngineConfig.builder().jobTimeout(Duration.ofSeconds(5)).build().jobTimeout())
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
        .hasMessageContaining("jobTimeout PT1M must be shorter than lease PT1M");
    assertThatThrownBy(() -> EngineConfig.builder().jobTimeout(Duration.ZERO).build())
        .hasMessageContaining("jobTimeout must be positive");
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The job timeout defaults to a bit below the lease and follows it; the heartbeat renews leases.
 */
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
  void acceptsATimeoutLongerThanTheLeaseSinceTheHeartbeatRenewsIt() {
    ExecutionConfig e =
        EngineConfig.builder()
            .lease(Duration.ofMinutes(1))
            .jobTimeout(Duration.ofHours(2))
            .build()
            .execution();
    assertThat(e.jobTimeout()).isEqualTo(Duration.ofHours(2));
    assertThat(e.heartbeatInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThatThrownBy(() -> EngineConfig.builder().jobTimeout(Duration.ZERO).build())
        .hasMessageContaining("pgbus.job-timeout must be positive");
  }

  @Test
  void theHeartbeatBeatsEveryThirdOfTheShorterOfTtlAndLease() {
    assertThat(EngineConfig.builder().build().execution().heartbeatInterval())
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(
            EngineConfig.builder()
                .lease(Duration.ofSeconds(3))
                .build()
                .execution()
                .heartbeatInterval())
        .isEqualTo(Duration.ofSeconds(1));
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .set(ExecutionConfig.HEARTBEAT_TTL, Duration.ofMillis(500))
                    .build())
        .hasMessageContaining("pgbus.heartbeat.ttl must be at least 1s, was 500ms");
  }
}

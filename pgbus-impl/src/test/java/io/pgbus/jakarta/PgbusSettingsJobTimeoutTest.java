package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** pgbus.job-timeout: read, defaulted from pgbus.lease, and refused with the key named. */
class PgbusSettingsJobTimeoutTest {

  private static PgbusSettings read(Map<String, String> keys) {
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)));
  }

  @Test
  void readsTheKey() {
    assertThat(read(Map.of("pgbus.job-timeout", "45s")).engine().execution().jobTimeout())
        .isEqualTo(Duration.ofSeconds(45));
  }

  @Test
  void withoutTheKeyTheTimeoutIsABitBelowTheLease() {
    assertThat(read(Map.of()).engine().execution().jobTimeout()).isEqualTo(Duration.ofSeconds(270));
    assertThat(read(Map.of("pgbus.lease", "2m")).engine().execution().jobTimeout())
        .isEqualTo(Duration.ofSeconds(108));
  }

  @Test
  void refusesABadValueNamingTheKey() {
    assertThatThrownBy(() -> read(Map.of("pgbus.job-timeout", "soon")))
        .hasMessageContaining("pgbus.job-timeout=soon is invalid")
        .hasMessageContaining("90% of pgbus.lease");
    assertThat(read(Map.of("pgbus.job-timeout", "10m")).engine().execution().jobTimeout())
        .as("longer than the lease: the heartbeat renews it")
        .isEqualTo(Duration.ofMinutes(10));
  }
}

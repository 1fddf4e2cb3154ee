package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** pgbus.retention.completed: a duration, or 0 to delete a job when it completes. */
class PgbusSettingsRetentionTest {

  private static PgbusSettings read(Map<String, String> keys) {
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)));
  }

  @Test
  void zeroDeletesCompletedJobs() {
    assertThat(
            read(Map.of("pgbus.retention.completed", "0")).engine().retention().deletesCompleted())
        .isTrue();
    assertThat(
            read(Map.of("pgbus.retention.completed", "0s")).engine().retention().deletesCompleted())
        .isTrue();
    assertThat(read(Map.of()).engine().retention().completed()).isEqualTo(Duration.ofDays(1));
    assertThat(read(Map.of("pgbus.retention.completed", "2h")).engine().retention().completed())
        .isEqualTo(Duration.ofHours(2));
  }

  @Test
  void refusesANegativeOrUnreadableRetentionNamingTheKey() {
    assertThatThrownBy(() -> read(Map.of("pgbus.retention.completed", "-1s")))
        .hasMessageContaining("pgbus.retention.completed=-1s is invalid: use 0 (delete at once)");
    assertThatThrownBy(() -> read(Map.of("pgbus.retention.completed", "never")))
        .hasMessageContaining("pgbus.retention.completed=never is invalid");
    assertThatThrownBy(() -> read(Map.of("pgbus.retention.dead", "0")))
        .hasMessageContaining("pgbus.retention.dead=0 is invalid");
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Each role reads its own record, every setting is declared once with a default inside its range,
 * and refusals name the keys the user wrote, as values a caller can read without parsing text.
 */
class EngineConfigTest {

  @Test
  void crossFieldErrorsNameTheKeysAndCarryTheFirstAsAValue() {
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .pollInterval(Duration.ofMinutes(2))
                    .pollCeiling(Duration.ofMinutes(1))
                    .build())
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> {
              assertThat(e.key()).isEqualTo("pgbus.poll-interval");
              assertThat(e.getMessage())
                  .isEqualTo(
                      "pgbus.poll-interval=2m is longer than pgbus.poll-ceiling=1m;"
                          + " pgbus.poll-interval must not exceed pgbus.poll-ceiling: shorten the"
                          + " one or lengthen the other");
            });
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .reconnectMin(Duration.ofMinutes(1))
                    .reconnectMax(Duration.ofSeconds(30))
                    .build())
        .hasMessageStartingWith(
            "pgbus.listener.reconnect-min=1m is longer than pgbus.listener.reconnect-max=30s");
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .probeTimeout(Duration.ofMinutes(2))
                    .build()
                    .listener()
                    .requireProbeTimeoutWithinInterval())
        .hasMessageStartingWith(
            "pgbus.listener.probe-timeout=2m is longer than pgbus.listener.probe-interval=1m");
    assertThatThrownBy(() -> new RetryPolicy(Duration.ofHours(2), Duration.ofHours(1), 0.1))
        .hasMessageStartingWith("pgbus.retry.base=2h is longer than pgbus.retry.cap=1h");
    assertThatThrownBy(() -> EngineConfig.builder().leaderTtl(Duration.ofMillis(500)).build())
        .hasMessage("pgbus.leader.ttl must be at least 1s, was 500ms");
    assertThatThrownBy(() -> EngineConfig.builder().pruneBatch(0).build())
        .hasMessage("pgbus.prune-batch must be at least 1, was 0");
    assertThatThrownBy(() -> EngineConfig.builder().maxPayloadBytes(1).build())
        .hasMessage("pgbus.max-payload-bytes must be at least 2, was 1");
  }

  @Test
  void aBadCronIsRefusedWithTheKeyOfItsNameOrItsSchedule() {
    assertThatThrownBy(() -> CronJob.of("9lives", "@daily", "q"))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> {
              assertThat(e.key()).isEqualTo("pgbus.crons");
              assertThat(e.keyedMessage()).startsWith("pgbus.crons: invalid cron name '9lives'");
            });
    assertThatThrownBy(() -> CronJob.of("nightly", "0 25 * * *", "q"))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> {
              assertThat(e.key()).isEqualTo("pgbus.cron.nightly.schedule");
              assertThat(e.keyedMessage())
                  .startsWith(
                      "pgbus.cron.nightly.schedule=0 25 * * * is invalid: invalid cron schedule");
              assertThat(e.getMessage()).startsWith("cron 'nightly': invalid cron schedule");
            });
  }

  @Test
  void everySettingIsDeclaredOnceWithADefaultInsideItsRange() {
    var keys = new HashSet<String>();
    for (Setting<?> s : EngineConfig.SETTINGS) {
      assertThat(keys.add(s.key())).as(s.key() + " declared once").isTrue();
      assertThat(s.key()).startsWith("pgbus.");
      if (s.fallback() != null) {
        assertThat(allowsFallback(s)).as(s.key() + "'s default in its range").isTrue();
      }
    }
    assertThat(keys).contains("pgbus.lease", "pgbus.retry.jitter", "pgbus.max-payload-bytes");
  }

  private static <T extends Comparable<? super T>> boolean allowsFallback(Setting<T> s) {
    return s.allows(s.fallback());
  }

  @Test
  void aSourceFillsEveryRoleAndTheBuilderOverridesIt() {
    Map<Setting<?>, Object> set =
        Map.of(
            TickerConfig.INTERVAL, Duration.ofMillis(200),
            ElectorConfig.TTL, Duration.ofSeconds(5),
            RetentionConfig.BATCH, 7,
            RetryPolicy.JITTER, 0.5,
            ExecutionConfig.LEASE, Duration.ofSeconds(10));
    SettingSource source =
        new SettingSource() {
          @Override
          public <T extends Comparable<? super T>> T value(Setting<T> setting) {
            return setting.type().cast(set.get(setting));
          }
        };
    EngineConfig config =
        EngineConfig.builder().settings(source).leaderTtl(Duration.ofSeconds(3)).build();
    assertThat(config.ticker().interval()).isEqualTo(Duration.ofMillis(200));
    assertThat(config.ticker().ceiling()).isEqualTo(TickerConfig.CEILING.fallback());
    assertThat(config.elector().ttl()).isEqualTo(Duration.ofSeconds(3));
    assertThat(config.retention().batch()).isEqualTo(7);
    assertThat(config.execution().retry().jitter()).isEqualTo(0.5);
    assertThat(config.execution().jobTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(
            EngineConfig.builder()
                .settings(source)
                .set(TickerConfig.INTERVAL, null)
                .build()
                .ticker()
                .interval())
        .as("unset in the builder: the source's value")
        .isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void aWorkerIdWithANewlineIsRefusedNamingTheKeyAndTheEscapedValue() {
    assertThatThrownBy(() -> EngineConfig.builder().workerId("host:1\nINFO forged").build())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("worker id 'host:1\\u000aINFO forged'")
        .hasMessageContaining("control character U+000A")
        .extracting(e -> ((InvalidConfigException) e).keyedMessage())
        .asString()
        .contains("pgbus.worker-id=host:1\\u000aINFO forged is invalid");
    assertThatThrownBy(() -> EngineConfig.builder().workerId("").build())
        .hasMessageContaining("it is empty");
    assertThatThrownBy(() -> EngineConfig.builder().workerId("w".repeat(256)).build())
        .hasMessageContaining("256 characters");
    assertThat(EngineConfig.builder().workerId("host-a:1234 (eu-west)").build().workerId())
        .isEqualTo("host-a:1234 (eu-west)");
  }
}

package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.ElectorConfig;
import io.pgbus.engine.ErrorDetail;
import io.pgbus.engine.ExecutionConfig;
import io.pgbus.engine.ListenerConfig;
import io.pgbus.engine.MaintainerConfig;
import io.pgbus.engine.RetentionConfig;
import io.pgbus.engine.RetryPolicy;
import io.pgbus.engine.Setting;
import io.pgbus.engine.TickerConfig;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Configuration that would be silently wrong fails deployment with the key, the value and the fix:
 * misspelled keys, a queue in two capsules, and durations outside their documented ranges.
 */
class PgbusSettingsValidationTest {

  private static PgbusSettings read(String... pairs) {
    var keys = new HashMap<String, String>();
    keys.put("pgbus.capsules", "mail");
    keys.put("pgbus.capsule.mail.queues", "mail");
    for (int i = 0; i < pairs.length; i += 2) {
      keys.put(pairs[i], pairs[i + 1]);
    }
    return read(keys);
  }

  private static PgbusSettings read(Map<String, String> keys) {
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)), keys.keySet());
  }

  @Test
  void aSchemaThatIsNoIdentifierFailsDeploymentNamingTheKeyTheValueAndTheFix() {
    assertThatThrownBy(() -> read("pgbus.schema", "Tenant B"))
        .hasMessageStartingWith(
            "pgbus: pgbus.schema=Tenant B is not an SQL identifier: use a lower-case SQL"
                + " identifier of at most 63 bytes");
    assertThat(read().schema().name()).isEqualTo("pgbus");
    assertThat(read("pgbus.schema", "tenant_b").schema().name()).isEqualTo("tenant_b");
  }

  @Test
  void aMisspelledCapsuleKeyFailsNamingTheNearestKnownKey() {
    assertThatThrownBy(() -> read("pgbus.capsule.mail.concurency", "4"))
        .hasMessage(
            "pgbus: pgbus.capsule.mail.concurency is not a pgbus key; did you mean"
                + " pgbus.capsule.mail.concurrency? (every key is listed in docs/configuration.md)");
  }

  @Test
  void aMisspelledCronKeyFailsNamingTheNearestKnownKey() {
    assertThatThrownBy(
            () ->
                read(
                    "pgbus.crons", "nightly",
                    "pgbus.cron.nightly.schedule", "0 3 * * *",
                    "pgbus.cron.nightly.queue", "reports",
                    "pgbus.cron.nightly.zon", "UTC"))
        .hasMessageContaining(
            "pgbus.cron.nightly.zon is not a pgbus key; did you mean pgbus.cron.nightly.zone?");
  }

  @Test
  void aMisspelledTopLevelKeyFailsNamingTheNearestKnownKey() {
    assertThatThrownBy(() -> read("pgbus.leese", "5m"))
        .hasMessageContaining("pgbus.leese is not a pgbus key; did you mean pgbus.lease?");
    assertThatThrownBy(() -> read("pgbus.listener.reconect-max", "5m"))
        .hasMessageContaining("did you mean pgbus.listener.reconnect-max?");
    assertThatThrownBy(() -> read("pgbus.capsules.mail.queues", "mail"))
        .hasMessageContaining("pgbus.capsules.mail.queues is not a pgbus key");
  }

  @Test
  void jobsPerTransactionIsAutoByDefaultAndTakesAutoOrOneToOneHundred() {
    assertThat(read().engine().capsules().get(0).jobsPerTransaction())
        .as("default")
        .isEqualTo(io.pgbus.engine.CapsuleConfig.AUTO);
    assertThat(
            read("pgbus.capsule.mail.jobs-per-transaction", "AUTO")
                .engine()
                .capsules()
                .get(0)
                .adaptive())
        .isTrue();
    assertThat(
            read("pgbus.capsule.mail.jobs-per-transaction", "1")
                .engine()
                .capsules()
                .get(0)
                .jobsPerTransaction())
        .as("never group")
        .isEqualTo(1);
    for (String bad : List.of("0", "101", "-1", "ten")) {
      assertThatThrownBy(() -> read("pgbus.capsule.mail.jobs-per-transaction", bad))
          .hasMessage(
              "pgbus: pgbus.capsule.mail.jobs-per-transaction="
                  + bad
                  + " is invalid: use auto (one job per transaction, more under a backlog) or a"
                  + " whole number from 1 (never group) to 100 (default auto)");
    }
  }

  @Test
  void keysOfOtherPrefixesAreLeftAlone() {
    assertThat(
            read("pgbus.it.http.port", "19080", "pgbus.datasource.max-pool-size", "20")
                .engine()
                .capsules())
        .hasSize(1);
  }

  @Test
  void oneQueueInTwoCapsulesFailsNamingBoth() {
    assertThatThrownBy(
            () ->
                read(
                    "pgbus.capsules", "mail,bulk",
                    "pgbus.capsule.bulk.queues", "newsletters,mail"))
        .hasMessage(
            "pgbus: queue 'mail' is in pgbus.capsule.mail.queues and in pgbus.capsule.bulk.queues;"
                + " a queue belongs to one capsule: remove it from one of them");
  }

  @Test
  void aCapsuleOrCronListedTwiceFailsNamingTheListKey() {
    assertThatThrownBy(() -> read("pgbus.capsules", "mail,mail"))
        .hasMessage("pgbus: pgbus.capsules: two capsules are named 'mail'");
    assertThatThrownBy(
            () ->
                read(
                    "pgbus.crons", "nightly,nightly",
                    "pgbus.cron.nightly.schedule", "0 3 * * *",
                    "pgbus.cron.nightly.queue", "reports"))
        .hasMessage("pgbus: pgbus.crons: two crons are named 'nightly'");
  }

  @Test
  void aLeaseOfZeroOrAHundredYearsFailsWithItsRange() {
    assertThatThrownBy(() -> read("pgbus.lease", "0s"))
        .hasMessage(
            "pgbus: pgbus.lease=0s is invalid: use a duration from 1s to 7d, written as 500ms,"
                + " 30s, 5m, 2h, 14d or PT30S (default 5m)");
    assertThatThrownBy(() -> read("pgbus.lease", "36500d"))
        .hasMessageStartingWith(
            "pgbus: pgbus.lease=36500d is invalid: use a duration from 1s to 7d");
    assertThatThrownBy(() -> read("pgbus.lease", "99999999999999999999d"))
        .hasMessageStartingWith("pgbus: pgbus.lease=99999999999999999999d is invalid");
  }

  @Test
  void aPollIntervalLongerThanThePollCeilingFailsNamingBothKeys() {
    assertThatThrownBy(() -> read("pgbus.poll-interval", "2m", "pgbus.poll-ceiling", "1m"))
        .hasMessage(
            "pgbus: pgbus.poll-interval=2m is longer than pgbus.poll-ceiling=1m;"
                + " pgbus.poll-interval must not exceed pgbus.poll-ceiling: shorten the one or"
                + " lengthen the other");
  }

  @Test
  void aHeartbeatTtlOutOfBoundsFailsNamingTheKey() {
    assertThatThrownBy(() -> read("pgbus.heartbeat.ttl", "500ms"))
        .hasMessageContaining("pgbus.heartbeat.ttl");
    assertThatThrownBy(() -> read("pgbus.heartbeat.ttl", "2h"))
        .hasMessageContaining("pgbus.heartbeat.ttl");
  }

  @Test
  void otherPairsAreCheckedByKey() {
    assertThatThrownBy(() -> read("pgbus.retry.base", "2h", "pgbus.retry.cap", "1h"))
        .hasMessageStartingWith("pgbus: pgbus.retry.base=2h is longer than pgbus.retry.cap=1h");
    assertThatThrownBy(
            () -> read("pgbus.listener.reconnect-min", "1m", "pgbus.listener.reconnect-max", "30s"))
        .hasMessageStartingWith("pgbus: pgbus.listener.reconnect-min=1m is longer than");
    assertThatThrownBy(() -> read("pgbus.listener.probe-timeout", "2m"))
        .hasMessageStartingWith(
            "pgbus: pgbus.listener.probe-timeout=2m is longer than pgbus.listener.probe-interval=1m");
  }

  @Test
  void everyDurationKeyRefusesZeroAndNegativeExceptTheCompletedRetention() {
    for (Setting<Duration> range :
        List.of(
            TickerConfig.INTERVAL,
            TickerConfig.CEILING,
            ExecutionConfig.LEASE,
            ExecutionConfig.JOB_TIMEOUT,
            ListenerConfig.PROBE_INTERVAL,
            ListenerConfig.PROBE_TIMEOUT,
            ListenerConfig.RECONNECT_MIN,
            ListenerConfig.RECONNECT_MAX,
            MaintainerConfig.RESCUE_INTERVAL,
            MaintainerConfig.PRUNE_INTERVAL,
            RetentionConfig.DEAD,
            ExecutionConfig.DRAIN_TIMEOUT,
            ElectorConfig.TTL,
            RetryPolicy.BASE,
            RetryPolicy.CAP,
            PgbusSettings.STALL_THRESHOLD)) {
      assertThatThrownBy(() -> read(range.key(), "0s"))
          .hasMessageContaining(range.key() + "=0s is invalid");
      assertThatThrownBy(() -> read(range.key(), "-PT1S"))
          .hasMessageContaining(range.key() + "=-PT1S is invalid");
    }
    assertThat(read("pgbus.retention.completed", "0").engine().retention().completed()).isZero();
  }

  @Test
  void theDefaultsAreInsideTheirRanges() {
    PgbusSettings s = read();
    assertThat(s.engine().execution().lease()).isEqualTo(Duration.ofMinutes(5));
    assertThat(s.errorDetail()).isEqualTo(ErrorDetail.STACK);
  }

  @Test
  void errorDetailIsReadAndABadValueIsRefused() {
    assertThat(read("pgbus.errors.detail", "message").errorDetail()).isEqualTo(ErrorDetail.MESSAGE);
    assertThat(read("pgbus.errors.detail", "CLASS").errorDetail()).isEqualTo(ErrorDetail.CLASS);
    assertThatThrownBy(() -> read("pgbus.errors.detail", "none"))
        .hasMessageStartingWith("pgbus: pgbus.errors.detail=none is invalid: use stack");
  }

  @Test
  void metricsIsAutoByDefaultAndABadValueIsRefused() {
    assertThat(read().metrics()).isEqualTo("auto");
    assertThat(read("pgbus.metrics", "OTel").metrics()).isEqualTo("otel");
    assertThatThrownBy(() -> read("pgbus.metrics", "prometheus"))
        .hasMessageStartingWith("pgbus: pgbus.metrics=prometheus is invalid: use auto");
  }

  @Test
  void theDeployCheckWarnsByDefaultAndABadValueIsRefused() {
    assertThat(read().deployCheck()).isEqualTo(io.pgbus.engine.DeployCheck.Mode.WARN);
    assertThat(read("pgbus.deploy-check", "FAIL").deployCheck())
        .isEqualTo(io.pgbus.engine.DeployCheck.Mode.FAIL);
    assertThat(read("pgbus.deploy-check", "off").deployCheck())
        .isEqualTo(io.pgbus.engine.DeployCheck.Mode.OFF);
    assertThatThrownBy(() -> read("pgbus.deploy-check", "strict"))
        .hasMessageStartingWith("pgbus: pgbus.deploy-check=strict is invalid: use off");
  }

  @Test
  void theWakeModeIsCoalescedByDefaultAndABadValueIsRefused() {
    assertThat(read().engine().wakeMode()).isEqualTo(io.pgbus.engine.WakeMode.COALESCED);
    assertThat(read("pgbus.wake-mode", "In-Transaction").engine().wakeMode())
        .isEqualTo(io.pgbus.engine.WakeMode.IN_TRANSACTION);
    assertThatThrownBy(() -> read("pgbus.wake-mode", "in_transaction"))
        .hasMessage(
            "pgbus: pgbus.wake-mode=in_transaction is invalid: use coalesced or in-transaction"
                + " (default coalesced)");
  }
}

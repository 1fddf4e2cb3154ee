package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.MisfirePolicy;
import io.pgbus.engine.CronJob;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * pgbus.crons and pgbus.cron.<name>.*: read with defaults, and refused naming key, value and fix.
 */
class PgbusSettingsCronTest {

  private static PgbusSettings read(Map<String, String> keys) {
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)), keys.keySet());
  }

  private static Map<String, String> nightly(String... more) {
    var keys = new HashMap<String, String>();
    keys.put("pgbus.crons", "nightly");
    keys.put("pgbus.cron.nightly.schedule", "0 3 * * *");
    keys.put("pgbus.cron.nightly.queue", "reports");
    for (int i = 0; i < more.length; i += 2) {
      keys.put(more[i], more[i + 1]);
    }
    return keys;
  }

  @Test
  void readsACronWithItsDefaults() {
    assertThat(read(nightly()).engine().crons())
        .containsExactly(new CronJob("nightly", "0 3 * * *", ZoneId.of("UTC"), "reports", "{}"));
  }

  @Test
  void readsZoneAndPayload() {
    CronJob cron =
        read(nightly(
                "pgbus.cron.nightly.zone", "Europe/Berlin",
                "pgbus.cron.nightly.payload", "{\"report\": \"daily\"}"))
            .engine()
            .crons()
            .get(0);
    assertThat(cron.zone()).isEqualTo(ZoneId.of("Europe/Berlin"));
    assertThat(cron.payloadJson()).isEqualTo("{\"report\": \"daily\"}");
  }

  @Test
  void readsTheMisfirePolicyRunOnceByDefault() {
    assertThat(read(nightly()).engine().crons().get(0).misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);
    CronJob skip = read(nightly("pgbus.cron.nightly.misfire", "skip")).engine().crons().get(0);
    assertThat(skip.misfire()).isEqualTo(MisfirePolicy.SKIP);
    assertThat(skip.catchUpLimit()).isNull();
    CronJob once =
        read(nightly("pgbus.cron.nightly.misfire", " Run-Once ")).engine().crons().get(0);
    assertThat(once.misfire()).isEqualTo(MisfirePolicy.RUN_ONCE);
    CronJob catchUp =
        read(nightly("pgbus.cron.nightly.misfire", "catch-up:5")).engine().crons().get(0);
    assertThat(catchUp.misfire()).isEqualTo(MisfirePolicy.CATCH_UP);
    assertThat(catchUp.catchUpLimit()).isEqualTo(5);
    assertThat(
            read(nightly("pgbus.cron.nightly.misfire", "catch-up:1000"))
                .engine()
                .crons()
                .get(0)
                .catchUpLimit())
        .isEqualTo(1000);
  }

  @Test
  void readsTheOverlapPolicyAndRefusesABadOneNamingKeyValueAndTheValuesAllowed() {
    assertThat(read(nightly()).engine().crons().get(0).overlap())
        .isEqualTo(io.pgbus.OverlapPolicy.ALLOW);
    assertThat(
            read(nightly("pgbus.cron.nightly.overlap", "skip")).engine().crons().get(0).overlap())
        .isEqualTo(io.pgbus.OverlapPolicy.SKIP);
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.overlap", "sometimes")))
        .hasMessageStartingWith("pgbus: pgbus.cron.nightly.overlap=sometimes is invalid:")
        .hasMessageContaining("unknown overlap policy")
        .hasMessageContaining("use allow")
        .hasMessageContaining("queue")
        .hasMessageContaining("cancel-previous");
  }

  @Test
  void refusesABadMisfirePolicyNamingKeyValueAndTheFormsAllowed() {
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "sometimes")))
        .hasMessageStartingWith("pgbus: pgbus.cron.nightly.misfire=sometimes is invalid:")
        .hasMessageContaining("unknown misfire policy")
        .hasMessageContaining("use skip")
        .hasMessageContaining("run-once")
        .hasMessageContaining("pgbus.cron.nightly.misfire=catch-up:5");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "catch-up")))
        .hasMessageContaining("pgbus.cron.nightly.misfire=catch-up is invalid")
        .hasMessageContaining("catch-up needs the most runs to catch up");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "catch-up:lots")))
        .hasMessageContaining("'lots' is not a whole number");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "catch-up:0")))
        .hasMessageContaining("the catch-up limit 0 is out of range");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "catch-up:1001")))
        .hasMessageContaining("the catch-up limit 1001 is out of range")
        .hasMessageContaining("1 to 1000");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.misfire", "run_once")))
        .hasMessageContaining("pgbus.cron.nightly.misfire=run_once is invalid");
  }

  @Test
  void aMisspelledMisfireKeyIsCaughtWithTheKeyMeant() {
    assertThat(SettingKeys.unknown(java.util.List.of("pgbus.cron.nightly.misfir")))
        .contains("did you mean pgbus.cron.nightly.misfire?");
  }

  @Test
  void withoutCronsThereAreNone() {
    assertThat(read(Map.of()).engine().crons()).isEmpty();
  }

  @Test
  void refusesAnInvalidScheduleNamingKeyValueAndRule() {
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.schedule", "0 25 * * *")))
        .hasMessageStartingWith("pgbus: pgbus.cron.nightly.schedule=0 25 * * * is invalid:")
        .hasMessageContaining("25 not in range")
        .hasMessageContaining("use 5 fields");
  }

  @Test
  void refusesAMissingScheduleOrQueueSayingWhatToSet() {
    Map<String, String> noSchedule = nightly();
    noSchedule.remove("pgbus.cron.nightly.schedule");
    assertThatThrownBy(() -> read(noSchedule))
        .hasMessageContaining("pgbus.cron.nightly.schedule is not set")
        .hasMessageContaining("pgbus.cron.nightly.schedule=0 3 * * *");
    Map<String, String> noQueue = nightly();
    noQueue.remove("pgbus.cron.nightly.queue");
    assertThatThrownBy(() -> read(noQueue))
        .hasMessageContaining("pgbus.cron.nightly.queue is not set");
  }

  @Test
  void refusesABadQueueZoneOrPayload() {
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.queue", "Reports")))
        .hasMessageContaining("pgbus.cron.nightly.queue=Reports is invalid");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.zone", "Mars/Olympus")))
        .hasMessageContaining("pgbus.cron.nightly.zone=Mars/Olympus is invalid")
        .hasMessageContaining("Europe/Berlin");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.payload", "{report: 1}")))
        .hasMessageContaining("pgbus.cron.nightly.payload={report: 1} is invalid: it is not JSON");
    assertThatThrownBy(() -> read(nightly("pgbus.cron.nightly.payload", "null")))
        .hasMessageContaining("it is JSON null");
  }

  @Test
  void refusesACronKeyWhoseNameIsNotListed() {
    assertThatThrownBy(
            () ->
                read(
                    nightly(
                        "pgbus.cron.weekly.schedule", "@weekly", "pgbus.cron.weekly.queue", "q")))
        .hasMessageContaining(
            "pgbus.cron.weekly.* is set but 'weekly' is not listed in pgbus.crons=nightly")
        .hasMessageContaining("pgbus.crons=nightly,weekly");
  }

  @Test
  void refusesABadCronName() {
    Map<String, String> keys = nightly("pgbus.crons", "nightly,9lives");
    assertThatThrownBy(() -> read(keys))
        .hasMessageContaining("pgbus.cron.9lives.schedule is not set");
    keys.put("pgbus.cron.9lives.schedule", "@daily");
    keys.put("pgbus.cron.9lives.queue", "q");
    assertThatThrownBy(() -> read(keys))
        .hasMessageContaining("pgbus.crons: invalid cron name '9lives'");
  }
}

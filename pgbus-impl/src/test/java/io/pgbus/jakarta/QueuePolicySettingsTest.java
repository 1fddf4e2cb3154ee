package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.QueuePolicy;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Per-queue policy (issue #14) from MicroProfile Config ({@code pgbus.queue.<name>.*}) and from
 * {@code @Handles}: read and checked like the global keys, every error naming the key or the
 * handler and the attribute; the configuration wins over the annotation, attribute by attribute.
 */
class QueuePolicySettingsTest {

  private static PgbusSettings read(String... pairs) {
    var keys = new HashMap<String, String>();
    keys.put("pgbus.capsules", "main");
    keys.put("pgbus.capsule.main.queues", "exports,mail");
    for (int i = 0; i < pairs.length; i += 2) {
      keys.put(pairs[i], pairs[i + 1]);
    }
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)), keys.keySet());
  }

  @Test
  void aQueuesKeysOverrideTheGlobalOnesForThatQueueOnly() {
    EngineConfig c =
        read(
                "pgbus.job-timeout", "1m",
                "pgbus.queue.exports.job-timeout", "4m",
                "pgbus.queue.exports.max-attempts", "3",
                "pgbus.queue.exports.retry.base", "10s",
                "pgbus.queue.exports.retry.cap", "2m")
            .engine();
    assertThat(c.jobTimeout("exports")).isEqualTo(Duration.ofMinutes(4));
    assertThat(c.maxAttempts("exports")).isEqualTo(3);
    assertThat(c.retry("exports").base()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.retry("exports").cap()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.jobTimeout("mail")).isEqualTo(Duration.ofMinutes(1));
    assertThat(c.maxAttempts("mail")).isNull();
    assertThat(c.retry("mail")).isEqualTo(c.execution().retry());
  }

  @Test
  void aRateAndFifoPerKeyAreReadAndABadPairIsRefusedNamingTheKeys() {
    EngineConfig c =
        read(
                "pgbus.queue.mail.rate-limit", "100",
                "pgbus.queue.mail.rate-window", "1m",
                "pgbus.queue.exports.key-fifo", "true",
                "pgbus.queue.exports.key-fifo-skip-dead", "TRUE")
            .engine();
    assertThat(c.queueLimit("mail"))
        .isEqualTo(new io.pgbus.engine.QueueLimit("mail", null, null, 100, Duration.ofMinutes(1)));
    assertThat(c.queueLimit("exports").fifo()).isTrue();
    assertThat(c.queueLimit("exports").fifoSkipsDead()).isTrue();
    assertThatThrownBy(() -> read("pgbus.queue.mail.rate-limit", "100"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining(
            "pgbus.queue.mail.rate-limit=100 has no window: set pgbus.queue.mail.rate-window too");
    assertThatThrownBy(() -> read("pgbus.queue.mail.rate-window", "0s"))
        .hasMessageContaining("pgbus.queue.mail.rate-window=0s is invalid");
    assertThatThrownBy(() -> read("pgbus.queue.mail.key-fifo", "yes"))
        .hasMessageContaining("pgbus.queue.mail.key-fifo=yes is invalid: use true or false");
  }

  @Test
  void aQueueThatNoCapsuleReadsMayHaveKeysForTheJvmsThatEnqueueToIt() {
    assertThat(read("pgbus.queue.reports.max-attempts", "5").engine().maxAttempts("reports"))
        .isEqualTo(5);
  }

  @Test
  void aBadValueFailsNamingTheQueuesKeyAndTheRange() {
    assertThatThrownBy(() -> read("pgbus.queue.exports.job-timeout", "soon"))
        .hasMessageStartingWith("pgbus: pgbus.queue.exports.job-timeout=soon is invalid: use")
        .hasMessageContaining("(default pgbus.job-timeout)");
    assertThatThrownBy(() -> read("pgbus.queue.exports.max-attempts", "0"))
        .hasMessageStartingWith("pgbus: pgbus.queue.exports.max-attempts=0 is invalid")
        .hasMessageContaining("1 to 1000");
  }

  @Test
  void aQueueTimeoutLongerThanTheLeaseIsAcceptedSinceTheHeartbeatRenewsIt() {
    assertThat(
            read("pgbus.lease", "5m", "pgbus.queue.exports.job-timeout", "2h")
                .engine()
                .jobTimeout("exports"))
        .isEqualTo(java.time.Duration.ofHours(2));
  }

  @Test
  void aQueueBaseLongerThanTheGlobalCapFailsNamingBothKeys() {
    assertThatThrownBy(() -> read("pgbus.retry.cap", "1m", "pgbus.queue.exports.retry.base", "2m"))
        .hasMessageContaining(
            "pgbus.queue.exports.retry.base=2m is longer than pgbus.retry.cap=1m");
  }

  @Test
  void aMisspelledQueueKeyFailsNamingTheNearestKnownOne() {
    assertThatThrownBy(() -> read("pgbus.queue.exports.job-timout", "1m"))
        .hasMessageContaining(
            "pgbus.queue.exports.job-timout is not a pgbus key; did you mean"
                + " pgbus.queue.exports.job-timeout?");
  }

  @Test
  void aKeyForANameThatIsNoQueueNameFails() {
    assertThatThrownBy(() -> read("pgbus.queue.Exports.job-timeout", "1m"))
        .hasMessageStartingWith("pgbus: pgbus.queue.Exports.job-timeout: ")
        .hasMessageContaining("invalid queue name");
  }

  @Handles(value = "exports", jobTimeout = "3m", maxAttempts = 4, retryBase = "5s")
  static final class Annotated implements JobHandler<Object> {
    @Override
    public Outcome handle(Object payload, JobContext context) {
      return Outcome.complete();
    }
  }

  @Handles(value = "exports", retryCap = "forever")
  static final class BadlyAnnotated implements JobHandler<Object> {
    @Override
    public Outcome handle(Object payload, JobContext context) {
      return Outcome.complete();
    }
  }

  @Test
  void theAnnotationSetsWhatTheConfigurationLeavesOpen() {
    QueuePolicy annotated =
        HandlerRegistry.policy(
            "exports", Annotated.class.getAnnotation(Handles.class), Annotated.class);
    EngineConfig c =
        read("pgbus.queue.exports.max-attempts", "9")
            .engine()
            .withPolicyDefaults(List.of(annotated));
    assertThat(c.jobTimeout("exports")).as("from @Handles").isEqualTo(Duration.ofMinutes(3));
    assertThat(c.maxAttempts("exports")).as("the key wins").isEqualTo(9);
    assertThat(c.retry("exports").base()).as("from @Handles").isEqualTo(Duration.ofSeconds(5));
    assertThat(c.retry("exports").cap()).as("global").isEqualTo(c.execution().retry().cap());
  }

  @Test
  void aBadAttributeFailsNamingTheHandlerAndTheAttribute() {
    assertThatThrownBy(
            () ->
                HandlerRegistry.policy(
                    "exports",
                    BadlyAnnotated.class.getAnnotation(Handles.class),
                    BadlyAnnotated.class))
        .hasMessageStartingWith(
            "pgbus: handler "
                + BadlyAnnotated.class.getName()
                + ": @Handles(retryCap = \"forever\") for queue 'exports' is invalid"
                + " (pgbus.queue.exports.retry.cap=forever is invalid: use");
  }

  @Test
  void anAnnotatedTimeoutLongerThanTheLeaseIsAcceptedWhenMerged() {
    QueuePolicy annotated =
        HandlerRegistry.policy(
            "exports", Annotated.class.getAnnotation(Handles.class), Annotated.class);
    assertThat(
            read("pgbus.lease", "2m")
                .engine()
                .withPolicyDefaults(List.of(annotated))
                .jobTimeout("exports"))
        .isEqualTo(java.time.Duration.ofMinutes(3));
  }

  @Test
  void everyQueueKeySuffixIsDocumented() throws Exception {
    String doc =
        java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md"));
    for (String suffix : QueuePolicy.SUFFIXES) {
      assertThat(doc).contains("pgbus.queue.<name>." + suffix);
    }
  }
}

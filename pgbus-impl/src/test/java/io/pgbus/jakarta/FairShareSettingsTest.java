package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.InvalidConfigException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Fair share (issue #30) from MicroProfile Config: {@code pgbus.queue.<name>.fair-key} and {@code
 * .fair-weights} are read per queue, and a bad value fails the deployment naming the key, the value
 * and the fix.
 */
class FairShareSettingsTest {

  private static EngineConfig read(String... pairs) {
    var keys = new HashMap<String, String>();
    keys.put("pgbus.capsules", "main");
    keys.put("pgbus.capsule.main.queues", "exports,mail");
    for (int i = 0; i < pairs.length; i += 2) {
      keys.put(pairs[i], pairs[i + 1]);
    }
    return PgbusSettings.read(k -> Optional.ofNullable(keys.get(k)), keys.keySet()).engine();
  }

  @Test
  void aFairKeyAndWeightsAreReadForTheirQueueOnly() {
    EngineConfig c =
        read(
            "pgbus.queue.exports.fair-key", "concurrency-key",
            "pgbus.queue.exports.fair-weights", "tenantA:3, tenant B:1");
    assertThat(c.fairShare("exports").weights()).isEqualTo(Map.of("tenantA", 3, "tenant B", 1));
    assertThat(c.fairShare("mail")).isNull();
    assertThat(read("pgbus.queue.mail.fair-key", "concurrency-key").fairShare("mail").weights())
        .isEmpty();
  }

  @Test
  void badFairSettingsFailTheDeploymentNamingKeyValueAndFix() {
    assertThatThrownBy(() -> read("pgbus.queue.mail.fair-key", "tenant"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.queue.mail.fair-key=tenant is invalid: use concurrency-key");
    assertThatThrownBy(() -> read("pgbus.queue.mail.fair-weights", "a:2"))
        .hasMessageContaining(
            "pgbus.queue.mail.fair-weights=a:2 has no tenants to weigh: set"
                + " pgbus.queue.mail.fair-key=concurrency-key too");
    for (String bad : new String[] {"a:0", "a:1001", "a", "a:x", ":3", "a:1,,b:2", "a:1.5"}) {
      assertThatThrownBy(
              () ->
                  read(
                      "pgbus.queue.mail.fair-key",
                      "concurrency-key",
                      "pgbus.queue.mail.fair-weights",
                      bad))
          .as(bad)
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageContaining("pgbus.queue.mail.fair-weights=" + bad + " is invalid")
          .hasMessageContaining("each weight a whole number from 1 to 1000");
    }
    assertThatThrownBy(
            () ->
                read(
                    "pgbus.queue.mail.fair-key", "concurrency-key",
                    "pgbus.queue.mail.fair-weights", "a:1,a:2"))
        .hasMessageContaining("names a twice");
    assertThatThrownBy(() -> read("pgbus.queue.mail.fair-kye", "concurrency-key"))
        .hasMessageContaining("did you mean pgbus.queue.mail.fair-key?");
  }
}

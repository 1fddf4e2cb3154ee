package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.JobCipher;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which queues encrypt, read as a deployment reads it, and the refusals that fail it. */
class EncryptionSettingsTest {

  private static final String KEY = Base64.getEncoder().encodeToString(new byte[32]);

  private static JobCipher read(Map<String, String> m) {
    return EncryptionSettings.read(k -> Optional.ofNullable(m.get(k)), m.keySet());
  }

  @Test
  void aQueueWithEncryptTrueEncryptsWithTheNewestKey() {
    JobCipher c =
        read(
            Map.of(
                "pgbus.queue.billing.encrypt", "true",
                "pgbus.queue.mail.encrypt", "false",
                "pgbus.encryption.key-ids", "old,new",
                "pgbus.encryption.key.old", KEY,
                "pgbus.encryption.key.new", KEY));
    assertThat(c.queues()).containsExactly("billing");
    assertThat(c.keys().newest()).isEqualTo("new");
    assertThat(read(Map.of())).isSameAs(JobCipher.NONE);
  }

  @Test
  void badValuesFailTheDeploymentNamingTheSetting() {
    assertThatThrownBy(() -> read(Map.of("pgbus.queue.billing.encrypt", "yes")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> assertThat(e.key()).isEqualTo("pgbus.queue.billing.encrypt"))
        .hasMessageContaining("pgbus.queue.billing.encrypt=yes is not a boolean");
    assertThatThrownBy(() -> read(Map.of("pgbus.queue.billing.encrypt", "true")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> assertThat(e.key()).isEqualTo("pgbus.encryption.key-ids"))
        .hasMessageStartingWith("pgbus: pgbus.queue.billing.encrypt=true but")
        .hasMessageContaining("pgbus.encryption.key-ids is not set");
    assertThatThrownBy(
            () ->
                read(
                    Map.of(
                        "pgbus.queue.billing.encrypt", "true",
                        "pgbus.encryption.key-ids", "k1",
                        "pgbus.encryption.key.k1", "not base64!")))
        .hasMessageContaining("pgbus.encryption.key.k1 is not base64");
  }

  @Test
  void aMisspelledEncryptionKeyIsRefusedWithTheRightOneSuggested() {
    assertThat(SettingKeys.unknown(List.of("pgbus.encryption.keystor")))
        .contains("did you mean pgbus.encryption.keystore?");
    assertThat(SettingKeys.unknown(List.of("pgbus.queue.billing.encrpyt")))
        .contains("did you mean pgbus.queue.billing.encrypt?");
    assertThat(SettingKeys.unknown(List.of("pgbus.encryption.key.k1", "pgbus.queue.b.encrypt")))
        .isNull();
  }
}

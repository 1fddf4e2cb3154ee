package io.pgbus.test;

import io.pgbus.engine.JobCipher;
import io.pgbus.jakarta.EncryptionSettings;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** The kit's cipher of a plain test, read from settings as a deployment reads its config. */
final class Ciphers {
  private Ciphers() {}

  static JobCipher of(Map<String, String> settings) {
    var copy = Map.copyOf(Objects.requireNonNull(settings, "settings"));
    return EncryptionSettings.read(k -> Optional.ofNullable(copy.get(k)), copy.keySet());
  }
}

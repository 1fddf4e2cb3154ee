package io.pgbus.jakarta;

import io.pgbus.engine.EncryptionKeys;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.KeyRing;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Which queues encrypt ({@code pgbus.queue.<name>.encrypt=true}) and with which keys ({@link
 * EncryptionKeys}), read once from MicroProfile Config; the deployment fails on a bad value with
 * the key that holds it. Shared by the server runtime and the CLI.
 */
public final class EncryptionSettings {

  static final String SUFFIX = ".encrypt";

  private EncryptionSettings() {}

  /** The cipher the configuration describes; {@link JobCipher#NONE} when no queue encrypts. */
  public static JobCipher read(Function<String, Optional<String>> source, Iterable<String> keys) {
    var queues = new TreeSet<String>();
    for (var e : QueueKeys.values(SUFFIX, source, keys).entrySet()) {
      String key = QueueKeys.key(e.getKey(), SUFFIX);
      String value = e.getValue();
      if (!value.equals("true") && !value.equals("false")) {
        throw PgbusSettings.refused(
            key, key + "=" + value + " is not a boolean: set it to true or false");
      }
      if (value.equals("true")) {
        queues.add(e.getKey());
      }
    }
    try {
      KeyRing ring = EncryptionKeys.load(source, queues.stream().toList());
      return queues.isEmpty() && ring.isEmpty() ? JobCipher.NONE : new JobCipher(ring, queues);
    } catch (InvalidConfigException e) {
      throw PgbusSettings.refused(e);
    }
  }
}

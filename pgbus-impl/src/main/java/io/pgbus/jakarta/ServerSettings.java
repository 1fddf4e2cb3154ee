package io.pgbus.jakarta;

import io.pgbus.engine.DeployCheck;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JobCipher;
import java.util.Optional;
import java.util.function.Function;

/**
 * The servers' {@code pgbus.*} keys read outside a server: the command line (pgbus-cli) takes the
 * same keys, from flags and environment variables, and gets the same checks and error messages as a
 * deployment. A thin public face over {@link PgbusSettings}.
 *
 * @param engine the engine's configuration (capsules, queue policies and limits, payload limit)
 * @param deployCheck {@code pgbus.deploy-check}
 * @param cipher the queues that encrypt and their keys ({@link EncryptionSettings})
 */
public record ServerSettings(EngineConfig engine, DeployCheck.Mode deployCheck, JobCipher cipher) {

  /**
   * Reads and validates the settings.
   *
   * @param source a key's value, empty when it is not set
   * @param keys every key that is set, for the misspelling and unlisted-cron checks
   * @throws io.pgbus.engine.InvalidConfigException naming the key, the value and what is allowed
   */
  public static ServerSettings read(
      Function<String, Optional<String>> source, Iterable<String> keys) {
    PgbusSettings s = PgbusSettings.read(source, keys);
    return new ServerSettings(s.engine(), s.deployCheck(), EncryptionSettings.read(source, keys));
  }
}

package io.pgbus.engine;

import static java.time.Duration.ofHours;
import static java.time.Duration.ofSeconds;

import java.time.Duration;
import java.util.List;

/**
 * What the {@link Elector} reads.
 *
 * @param ttl how long a maintenance leader's lease lasts without renewal; at least 1 s
 */
public record ElectorConfig(Duration ttl) {

  public static final Setting<Duration> TTL =
      Setting.duration("pgbus.leader.ttl", ofSeconds(60), ofSeconds(1), ofHours(1));
  public static final List<Setting<?>> SETTINGS = List.of(TTL);

  public ElectorConfig {
    TTL.positive(ttl);
    if (ttl.compareTo(TTL.min()) < 0) {
      throw new InvalidConfigException(
          TTL.key(), TTL.key() + " must be at least 1s, was " + Durations.format(ttl));
    }
  }

  public static ElectorConfig from(SettingSource s) {
    return new ElectorConfig(s.valueOrDefault(TTL));
  }
}

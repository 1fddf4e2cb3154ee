package io.pgbus.engine;

import static java.time.Duration.ofDays;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;

import java.time.Duration;
import java.util.List;

/**
 * What the {@link Maintainer} reads besides the {@link RetentionConfig retention}.
 *
 * @param rescueInterval base period of the lease rescue task
 * @param pruneInterval base period of the retention task
 */
public record MaintainerConfig(Duration rescueInterval, Duration pruneInterval) {

  public static final Setting<Duration> RESCUE_INTERVAL =
      Setting.duration("pgbus.rescue-interval", ofSeconds(30), ofMillis(100), ofDays(1));
  public static final Setting<Duration> PRUNE_INTERVAL =
      Setting.duration("pgbus.prune-interval", ofMinutes(5), ofMillis(100), ofDays(1));
  public static final List<Setting<?>> SETTINGS = List.of(RESCUE_INTERVAL, PRUNE_INTERVAL);

  public MaintainerConfig {
    RESCUE_INTERVAL.positive(rescueInterval);
    PRUNE_INTERVAL.positive(pruneInterval);
  }

  public static MaintainerConfig from(SettingSource s) {
    return new MaintainerConfig(
        s.valueOrDefault(RESCUE_INTERVAL), s.valueOrDefault(PRUNE_INTERVAL));
  }
}

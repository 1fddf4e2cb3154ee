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
 * @param horizonWarn how long a transaction elsewhere in the database may hold a snapshot before
 *     the doctor warns: while it does, no row pgbus deletes or updates after its snapshot can be
 *     vacuumed, so finished jobs and claimed rows pile up as dead tuples (docs/operations.md)
 */
public record MaintainerConfig(
    Duration rescueInterval, Duration pruneInterval, Duration horizonWarn) {

  public static final Setting<Duration> RESCUE_INTERVAL =
      Setting.duration("pgbus.rescue-interval", ofSeconds(30), ofMillis(100), ofDays(1));
  public static final Setting<Duration> PRUNE_INTERVAL =
      Setting.duration("pgbus.prune-interval", ofMinutes(5), ofMillis(100), ofDays(1));
  public static final Setting<Duration> HORIZON_WARN =
      Setting.duration("pgbus.doctor.horizon-warn", ofMinutes(5), ofSeconds(1), ofDays(1));
  public static final List<Setting<?>> SETTINGS =
      List.of(RESCUE_INTERVAL, PRUNE_INTERVAL, HORIZON_WARN);

  public MaintainerConfig {
    RESCUE_INTERVAL.positive(rescueInterval);
    PRUNE_INTERVAL.positive(pruneInterval);
    HORIZON_WARN.positive(horizonWarn);
  }

  public static MaintainerConfig from(SettingSource s) {
    return new MaintainerConfig(
        s.valueOrDefault(RESCUE_INTERVAL),
        s.valueOrDefault(PRUNE_INTERVAL),
        s.valueOrDefault(HORIZON_WARN));
  }
}

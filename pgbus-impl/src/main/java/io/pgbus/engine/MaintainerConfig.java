package io.pgbus.engine;

import static java.time.Duration.ofDays;
import static java.time.Duration.ofHours;
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
 * @param historyRetention how long the per-minute history of the queues (pgbus.queue_minute, V31)
 *     is kept
 */
public record MaintainerConfig(
    Duration rescueInterval,
    Duration pruneInterval,
    Duration horizonWarn,
    Duration historyRetention) {

  public static final Setting<Duration> RESCUE_INTERVAL =
      Setting.duration("pgbus.rescue-interval", ofSeconds(30), ofMillis(100), ofDays(1));
  public static final Setting<Duration> PRUNE_INTERVAL =
      Setting.duration("pgbus.prune-interval", ofMinutes(5), ofMillis(100), ofDays(1));
  public static final Setting<Duration> HORIZON_WARN =
      Setting.duration("pgbus.doctor.horizon-warn", ofMinutes(5), ofSeconds(1), ofDays(1));
  // The SQL side (pgbus.queue_history_rollup) refuses the same range.
  public static final Setting<Duration> HISTORY_RETENTION =
      Setting.duration("pgbus.history.retention", ofDays(7), ofHours(1), ofDays(31));
  public static final List<Setting<?>> SETTINGS =
      List.of(RESCUE_INTERVAL, PRUNE_INTERVAL, HORIZON_WARN, HISTORY_RETENTION);

  public MaintainerConfig {
    RESCUE_INTERVAL.positive(rescueInterval);
    PRUNE_INTERVAL.positive(pruneInterval);
    HORIZON_WARN.positive(horizonWarn);
    if (!HISTORY_RETENTION.allows(HISTORY_RETENTION.positive(historyRetention))) {
      throw new InvalidConfigException(
          HISTORY_RETENTION.key(),
          HISTORY_RETENTION.key()
              + " must be 1h to 31d, was "
              + Durations.format(historyRetention));
    }
  }

  public static MaintainerConfig from(SettingSource s) {
    return new MaintainerConfig(
        s.valueOrDefault(RESCUE_INTERVAL),
        s.valueOrDefault(PRUNE_INTERVAL),
        s.valueOrDefault(HORIZON_WARN),
        s.valueOrDefault(HISTORY_RETENTION));
  }
}

package io.pgbus.engine;

import static java.time.Duration.ofDays;
import static java.time.Duration.ofMinutes;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How long finished jobs and audit entries are kept, and how the maintainer deletes them.
 *
 * @param completed how long completed and cancelled jobs are kept; zero deletes a job in the
 *     transaction that completes it
 * @param dead how long dead jobs are kept
 * @param audit how long audit entries (pgbus.audit, V7) are kept
 * @param batch rows deleted per retention statement
 */
public record RetentionConfig(Duration completed, Duration dead, Duration audit, int batch) {

  public static final Setting<Duration> COMPLETED =
      Setting.duration("pgbus.retention.completed", ofDays(1), Duration.ZERO, ofDays(3650));
  public static final Setting<Duration> DEAD =
      Setting.duration("pgbus.retention.dead", ofDays(14), ofMinutes(1), ofDays(3650));
  public static final Setting<Duration> AUDIT =
      Setting.duration("pgbus.retention.audit", ofDays(30), ofMinutes(1), ofDays(3650));
  public static final Setting<Integer> BATCH =
      Setting.integer("pgbus.prune-batch", 1000, 1, 100_000);
  public static final List<Setting<?>> SETTINGS = List.of(COMPLETED, DEAD, AUDIT, BATCH);

  public RetentionConfig {
    if (Objects.requireNonNull(completed, COMPLETED.key()).isNegative()) {
      throw new InvalidConfigException(
          COMPLETED.key(),
          COMPLETED.key() + " must not be negative, was " + Durations.format(completed));
    }
    DEAD.positive(dead);
    AUDIT.positive(audit);
    BATCH.atLeast(batch, 1);
  }

  public static RetentionConfig from(SettingSource s) {
    return new RetentionConfig(
        s.valueOrDefault(COMPLETED),
        s.valueOrDefault(DEAD),
        s.valueOrDefault(AUDIT),
        s.valueOrDefault(BATCH));
  }

  /** Whether completing a job deletes it (a completed-job retention of zero). */
  public boolean deletesCompleted() {
    return completed.isZero();
  }
}

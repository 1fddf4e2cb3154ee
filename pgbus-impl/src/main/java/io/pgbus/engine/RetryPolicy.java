package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with jitter: attempt n waits {@code min(cap, base * 2^(n-1))}, then scaled by
 * a random factor in {@code [1 - jitter, 1 + jitter]} and capped again. Jitter spreads retries of
 * jobs that failed together, so they do not come back together.
 */
public record RetryPolicy(Duration base, Duration cap, double jitter) {

  public static final Setting<Duration> BASE =
      Setting.duration(
          "pgbus.retry.base", Duration.ofSeconds(1), Duration.ofMillis(1), Duration.ofDays(1));
  public static final Setting<Duration> CAP =
      Setting.duration(
          "pgbus.retry.cap", Duration.ofHours(1), Duration.ofMillis(1), Duration.ofDays(365));
  public static final Setting<Double> JITTER = Setting.decimal("pgbus.retry.jitter", 0.2, 0, 0.99);
  public static final List<Setting<?>> SETTINGS = List.of(BASE, CAP, JITTER);

  public static final RetryPolicy DEFAULT = from(SettingSource.DEFAULTS);

  public RetryPolicy {
    BASE.positive(base);
    Objects.requireNonNull(cap, CAP.key());
    Setting.notLonger(BASE, base, CAP, cap);
    if (!(jitter >= 0 && jitter < 1)) {
      throw new InvalidConfigException(
          JITTER.key(), JITTER.key() + " must be in [0, 1), was " + jitter);
    }
  }

  public static RetryPolicy from(SettingSource s) {
    return new RetryPolicy(s.valueOrDefault(BASE), s.valueOrDefault(CAP), s.valueOrDefault(JITTER));
  }

  /**
   * The wait before the retry that follows failed attempt {@code attempt} (1-based). It saturates
   * at the cap, and never exceeds {@link EnqueueOptions#MAX_SCHEDULE_AHEAD} whatever the cap, so no
   * attempt number or configured cap can overflow it.
   */
  public Duration backoff(int attempt) {
    long capMs = withinHorizonMillis(cap);
    int doublings = Math.max(0, Math.min(attempt - 1, 62));
    long raw = Math.min(capMs, withinHorizonMillis(base));
    for (int i = 0; i < doublings && raw < capMs; i++) {
      raw *= 2;
    }
    raw = Math.min(raw, capMs);
    double factor = 1 + jitter * (2 * ThreadLocalRandom.current().nextDouble() - 1);
    return Duration.ofMillis(Math.min(capMs, Math.round(raw * factor)));
  }

  private static long withinHorizonMillis(Duration d) {
    return d.compareTo(EnqueueOptions.MAX_SCHEDULE_AHEAD) > 0
        ? EnqueueOptions.MAX_SCHEDULE_AHEAD.toMillis()
        : d.toMillis();
  }
}

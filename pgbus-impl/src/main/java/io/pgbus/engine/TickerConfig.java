package io.pgbus.engine;

import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofSeconds;

import java.time.Duration;
import java.util.List;

/**
 * What the {@link Ticker} reads. The keys keep the names they had when the ticker was called the
 * poller ({@code pgbus.poll-interval}, {@code pgbus.poll-ceiling}): what a tick does first is poll.
 *
 * @param interval how often the ticker polls while the listener is not delivering
 * @param ceiling how often the ticker polls while the listener delivers (a safety net)
 */
public record TickerConfig(Duration interval, Duration ceiling) {

  public static final Setting<Duration> INTERVAL =
      Setting.duration("pgbus.poll-interval", ofSeconds(1), ofMillis(10), ofHours(1));
  public static final Setting<Duration> CEILING =
      Setting.duration("pgbus.poll-ceiling", ofSeconds(60), ofMillis(10), ofHours(24));
  public static final List<Setting<?>> SETTINGS = List.of(INTERVAL, CEILING);

  public TickerConfig {
    INTERVAL.positive(interval);
    CEILING.positive(ceiling);
    Setting.notLonger(INTERVAL, interval, CEILING, ceiling);
  }

  /**
   * The longest a claim loop or the ticker backs off after failed rounds: ten poll intervals, so a
   * database that comes back is noticed within about ten times the degraded poll.
   */
  public Duration errorBackoffCeiling() {
    return interval.multipliedBy(10);
  }

  public static TickerConfig from(SettingSource s) {
    return new TickerConfig(s.valueOrDefault(INTERVAL), s.valueOrDefault(CEILING));
  }
}

package io.pgbus.engine;

import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;

import java.time.Duration;
import java.util.List;

/**
 * What the {@link Notifier} reads.
 *
 * @param probeInterval how often a delivering listener checks itself with a self-NOTIFY
 * @param probeTimeout how long a self-NOTIFY may take before the listener counts as degraded
 * @param reconnectMin first wait before reconnecting the listener
 * @param reconnectMax longest wait between listener reconnects
 */
public record ListenerConfig(
    Duration probeInterval, Duration probeTimeout, Duration reconnectMin, Duration reconnectMax) {

  public static final Setting<Duration> PROBE_INTERVAL =
      Setting.duration("pgbus.listener.probe-interval", ofSeconds(60), ofMillis(100), ofHours(24));
  public static final Setting<Duration> PROBE_TIMEOUT =
      Setting.duration("pgbus.listener.probe-timeout", ofSeconds(2), ofMillis(10), ofMinutes(5));
  public static final Setting<Duration> RECONNECT_MIN =
      Setting.duration("pgbus.listener.reconnect-min", ofMillis(250), ofMillis(10), ofMinutes(5));
  public static final Setting<Duration> RECONNECT_MAX =
      Setting.duration("pgbus.listener.reconnect-max", ofSeconds(30), ofMillis(10), ofHours(1));
  public static final List<Setting<?>> SETTINGS =
      List.of(PROBE_INTERVAL, PROBE_TIMEOUT, RECONNECT_MIN, RECONNECT_MAX);

  public ListenerConfig {
    PROBE_INTERVAL.positive(probeInterval);
    PROBE_TIMEOUT.positive(probeTimeout);
    RECONNECT_MIN.positive(reconnectMin);
    RECONNECT_MAX.positive(reconnectMax);
    Setting.notLonger(RECONNECT_MIN, reconnectMin, RECONNECT_MAX, reconnectMax);
  }

  /**
   * Refuses a probe timeout longer than the probe interval. The listener works either way (it sends
   * no probe while one is out), so the engine allows it, for tests that probe fast; a deployment is
   * held to it, since such a listener notices lost notifications later than it probes.
   */
  public void requireProbeTimeoutWithinInterval() {
    Setting.notLonger(PROBE_TIMEOUT, probeTimeout, PROBE_INTERVAL, probeInterval);
  }

  public static ListenerConfig from(SettingSource s) {
    return new ListenerConfig(
        s.valueOrDefault(PROBE_INTERVAL),
        s.valueOrDefault(PROBE_TIMEOUT),
        s.valueOrDefault(RECONNECT_MIN),
        s.valueOrDefault(RECONNECT_MAX));
  }
}

package io.pgbus.jakarta;

import io.pgbus.engine.EngineConfig.Builder;
import io.pgbus.engine.RetryPolicy;
import java.time.Duration;

/**
 * The default and the allowed range of every duration key (docs/configuration.md lists them). The
 * bounds keep out what cannot be meant: a lease of 0 rescues every job as it starts, one of 100
 * years never rescues a job whose worker died, and either way nobody notices until it hurts.
 */
final class Limits {

  /** A duration key, its default and its inclusive bounds. */
  record Range(String key, Duration fallback, Duration min, Duration max) {}

  private static final Duration MS = Duration.ofMillis(1);

  static final Range POLL_INTERVAL =
      range("pgbus.poll-interval", Builder.DEFAULT_POLL_INTERVAL, Duration.ofMillis(10), hours(1));
  static final Range POLL_CEILING =
      range("pgbus.poll-ceiling", Builder.DEFAULT_POLL_CEILING, Duration.ofMillis(10), days(1));
  static final Range LEASE =
      range("pgbus.lease", Builder.DEFAULT_LEASE, Duration.ofSeconds(1), days(7));
  static final Range JOB_TIMEOUT = range("pgbus.job-timeout", null, Duration.ofMillis(10), days(7));
  static final Range PROBE_INTERVAL =
      range(
          "pgbus.listener.probe-interval",
          Builder.DEFAULT_PROBE_INTERVAL,
          Duration.ofMillis(100),
          days(1));
  static final Range PROBE_TIMEOUT =
      range(
          "pgbus.listener.probe-timeout",
          Builder.DEFAULT_PROBE_TIMEOUT,
          Duration.ofMillis(10),
          Duration.ofMinutes(5));
  static final Range RECONNECT_MIN =
      range(
          "pgbus.listener.reconnect-min",
          Builder.DEFAULT_RECONNECT_MIN,
          Duration.ofMillis(10),
          Duration.ofMinutes(5));
  static final Range RECONNECT_MAX =
      range(
          "pgbus.listener.reconnect-max",
          Builder.DEFAULT_RECONNECT_MAX,
          Duration.ofMillis(10),
          hours(1));
  static final Range RESCUE_INTERVAL =
      range(
          "pgbus.rescue-interval",
          Builder.DEFAULT_RESCUE_INTERVAL,
          Duration.ofMillis(100),
          days(1));
  static final Range PRUNE_INTERVAL =
      range(
          "pgbus.prune-interval", Builder.DEFAULT_PRUNE_INTERVAL, Duration.ofMillis(100), days(1));
  static final Range COMPLETED_RETENTION =
      range(
          "pgbus.retention.completed",
          Builder.DEFAULT_COMPLETED_RETENTION,
          Duration.ZERO,
          days(3650));
  static final Range DEAD_RETENTION =
      range(
          "pgbus.retention.dead",
          Builder.DEFAULT_DEAD_RETENTION,
          Duration.ofMinutes(1),
          days(3650));
  static final Range AUDIT_RETENTION =
      range(
          "pgbus.retention.audit",
          Builder.DEFAULT_AUDIT_RETENTION,
          Duration.ofMinutes(1),
          days(3650));
  static final Range DRAIN_TIMEOUT =
      range("pgbus.drain-timeout", Builder.DEFAULT_DRAIN_TIMEOUT, MS, hours(1));
  static final Range LEADER_TTL =
      range("pgbus.leader.ttl", Builder.DEFAULT_LEADER_TTL, Duration.ofSeconds(1), hours(1));
  static final Range RETRY_BASE =
      range("pgbus.retry.base", RetryPolicy.DEFAULT.base(), MS, days(1));
  static final Range RETRY_CAP = range("pgbus.retry.cap", RetryPolicy.DEFAULT.cap(), MS, days(365));
  static final Range STALL_THRESHOLD =
      range(
          "pgbus.liveness.stall-threshold", Duration.ofSeconds(60), Duration.ofSeconds(1), days(1));

  private Limits() {}

  private static Range range(String key, Duration fallback, Duration min, Duration max) {
    return new Range(key, fallback, min, max);
  }

  private static Duration hours(long n) {
    return Duration.ofHours(n);
  }

  private static Duration days(long n) {
    return Duration.ofDays(n);
  }
}

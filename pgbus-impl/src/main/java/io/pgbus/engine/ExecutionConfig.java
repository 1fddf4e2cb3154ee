package io.pgbus.engine;

import static java.time.Duration.ofDays;
import static java.time.Duration.ofHours;
import static java.time.Duration.ofMillis;
import static java.time.Duration.ofMinutes;
import static java.time.Duration.ofSeconds;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What every {@link Capsule} shares: how long a claim holds a job, how long its handler may run,
 * how it is retried, and how long a stop waits for it.
 *
 * @param lease how long a claim holds a job before rescue may take it back
 * @param jobTimeout how long a handler may run before its worker thread is interrupted and the
 *     attempt fails; shorter than the lease, which stays the backstop for handlers that ignore the
 *     interrupt
 * @param drainTimeout how long a stop waits for running handlers
 * @param retry the backoff between failed attempts
 */
public record ExecutionConfig(
    Duration lease, Duration jobTimeout, Duration drainTimeout, RetryPolicy retry) {

  public static final Setting<Duration> LEASE =
      Setting.duration("pgbus.lease", ofMinutes(5), ofSeconds(1), ofDays(7));
  public static final Setting<Duration> JOB_TIMEOUT =
      Setting.derivedDuration("pgbus.job-timeout", "90% of pgbus.lease", ofMillis(10), ofDays(7));
  public static final Setting<Duration> DRAIN_TIMEOUT =
      Setting.duration("pgbus.drain-timeout", ofSeconds(30), ofMillis(1), ofHours(1));
  public static final List<Setting<?>> SETTINGS = List.of(LEASE, JOB_TIMEOUT, DRAIN_TIMEOUT);

  public ExecutionConfig {
    LEASE.positive(lease);
    JOB_TIMEOUT.positive(jobTimeout);
    if (jobTimeout.compareTo(lease) >= 0) {
      // Rescue may hand the job to another worker once the lease expires: the handler has to be
      // told to stop before that, or two attempts of one job could run at once.
      throw new InvalidConfigException(
          JOB_TIMEOUT.key(),
          JOB_TIMEOUT.key()
              + "="
              + Durations.format(jobTimeout)
              + " is invalid: it must be shorter than "
              + LEASE.key()
              + "="
              + Durations.format(lease)
              + ", so a handler is interrupted before rescue may run its job elsewhere; shorten "
              + JOB_TIMEOUT.key()
              + " or lengthen "
              + LEASE.key());
    }
    if (Objects.requireNonNull(drainTimeout, DRAIN_TIMEOUT.key()).isNegative()) {
      throw new InvalidConfigException(
          DRAIN_TIMEOUT.key(),
          DRAIN_TIMEOUT.key() + " must not be negative, was " + Durations.format(drainTimeout));
    }
    Objects.requireNonNull(retry, "retry");
  }

  /** Without an explicit job timeout, handlers get this share of the lease (4m30s of 5m). */
  public static Duration defaultJobTimeout(Duration lease) {
    return lease.multipliedBy(9).dividedBy(10);
  }

  public static ExecutionConfig from(SettingSource s) {
    Duration lease = s.valueOrDefault(LEASE);
    Duration jobTimeout = s.value(JOB_TIMEOUT);
    return new ExecutionConfig(
        lease,
        jobTimeout != null || lease == null ? jobTimeout : defaultJobTimeout(lease),
        s.valueOrDefault(DRAIN_TIMEOUT),
        RetryPolicy.from(s));
  }
}

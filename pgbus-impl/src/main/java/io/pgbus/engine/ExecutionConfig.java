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
 * What every {@link Capsule} shares: how long a claim holds a job, how its JVM keeps it alive, how
 * long its handler may run, how it is retried, and how long a stop waits for it.
 *
 * @param lease how long a claim holds a job before rescue may take it back; the heartbeat renews it
 *     while the handler runs within its timeout, so it bounds only a job whose JVM stopped vouching
 *     for it
 * @param jobTimeout how long a handler may run before its worker thread is interrupted and the
 *     attempt fails; it may be longer than the lease (the heartbeat renews the lease until the
 *     timeout, and the lease then stays the backstop for a handler that ignores the interrupt)
 * @param drainTimeout how long a stop waits for running handlers
 * @param retry the backoff between failed attempts
 * @param heartbeatTtl how long a JVM's node row stays valid without renewal: it is renewed every
 *     {@link #heartbeatInterval} while jobs run, and the leader rescues the jobs of a row older
 *     than two thirds of it
 */
public record ExecutionConfig(
    Duration lease,
    Duration jobTimeout,
    Duration drainTimeout,
    RetryPolicy retry,
    Duration heartbeatTtl) {

  public static final Setting<Duration> LEASE =
      Setting.duration("pgbus.lease", ofMinutes(5), ofSeconds(1), ofDays(7));
  public static final Setting<Duration> JOB_TIMEOUT =
      Setting.derivedDuration("pgbus.job-timeout", "90% of pgbus.lease", ofMillis(10), ofDays(7));
  public static final Setting<Duration> DRAIN_TIMEOUT =
      Setting.duration("pgbus.drain-timeout", ofSeconds(30), ofMillis(1), ofHours(1));
  public static final Setting<Duration> HEARTBEAT_TTL =
      Setting.duration("pgbus.heartbeat.ttl", ofSeconds(30), ofSeconds(1), ofHours(1));
  public static final List<Setting<?>> SETTINGS =
      List.of(LEASE, JOB_TIMEOUT, DRAIN_TIMEOUT, HEARTBEAT_TTL);

  /** The shortest TTL the SQL accepts (node_heartbeat_ttl_chk, V13). */
  private static final Duration MIN_TTL = ofSeconds(1);

  public ExecutionConfig {
    LEASE.positive(lease);
    JOB_TIMEOUT.positive(jobTimeout);
    HEARTBEAT_TTL.positive(heartbeatTtl);
    if (heartbeatTtl.compareTo(MIN_TTL) < 0) {
      throw new InvalidConfigException(
          HEARTBEAT_TTL.key(),
          HEARTBEAT_TTL.key() + " must be at least 1s, was " + Durations.format(heartbeatTtl));
    }
    if (Objects.requireNonNull(drainTimeout, DRAIN_TIMEOUT.key()).isNegative()) {
      throw new InvalidConfigException(
          DRAIN_TIMEOUT.key(),
          DRAIN_TIMEOUT.key() + " must not be negative, was " + Durations.format(drainTimeout));
    }
    Objects.requireNonNull(retry, "retry");
  }

  /**
   * How often a JVM that runs jobs renews its node row and their leases: a third of the TTL, or of
   * the lease when that is shorter, so a beat may be late by a third of either before anything
   * lapses.
   */
  public Duration heartbeatInterval() {
    return (lease.compareTo(heartbeatTtl) < 0 ? lease : heartbeatTtl).dividedBy(3);
  }

  /**
   * How often, at the latest, the leader looks for nodes whose heartbeat stopped: a third of the
   * TTL, so the jobs of a dead JVM are back within about a TTL and a third.
   */
  public Duration deadNodeCheckInterval() {
    return heartbeatTtl.dividedBy(3);
  }

  /**
   * How long after a look that found no running job the leader's rescue may skip its rounds: a job
   * claimed since then needs a rescue only once its lease ran out or two thirds of the heartbeat
   * TTL after its claim, whichever comes first; less a tenth of that (at most a second) for a claim
   * that began before the look and committed after it. Assumes the JVMs of a deployment share
   * pgbus.lease and pgbus.heartbeat.ttl, as they share the rest of the schedule of the rescue.
   */
  public Duration nothingToRescueFor() {
    Duration first = heartbeatTtl.multipliedBy(2).dividedBy(3);
    first = lease.compareTo(first) < 0 ? lease : first;
    Duration slack = first.dividedBy(10);
    return first.minus(slack.compareTo(Duration.ofSeconds(1)) < 0 ? slack : Duration.ofSeconds(1));
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
        RetryPolicy.from(s),
        s.valueOrDefault(HEARTBEAT_TTL));
  }
}

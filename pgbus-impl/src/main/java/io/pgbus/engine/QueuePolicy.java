package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.QueueNames;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * What one queue overrides of the global execution settings: its job timeout, its attempts, its
 * backoff. Each part is null when the queue keeps the global value ({@code pgbus.job-timeout},
 * {@link EnqueueOptions#DEFAULT_MAX_ATTEMPTS}, {@code pgbus.retry.base}, {@code pgbus.retry.cap}).
 * Read from {@code pgbus.queue.<name>.*} and from the attributes of {@code @Handles}; the
 * configuration wins, part by part ({@link #over}). {@link #resolve} checks it against the globals
 * and names the queue's own key in every error.
 *
 * @param queue the queue
 * @param jobTimeout how long its handler may run (the heartbeat keeps its lease meanwhile)
 * @param maxAttempts the attempts of a job enqueued to it without {@link
 *     EnqueueOptions#withMaxAttempts}
 * @param retryBase the first backoff
 * @param retryCap the longest backoff
 * @param maxWait the start-by window of a job enqueued to it without its own deadline ({@link
 *     EnqueueOptions#startBy}), counted from when the job is due: not claimed by then, it never
 *     runs; null: none
 */
public record QueuePolicy(
    String queue,
    Duration jobTimeout,
    Integer maxAttempts,
    Duration retryBase,
    Duration retryCap,
    Duration maxWait) {

  /** The key family: {@code pgbus.queue.<name>.<suffix>}. */
  public static final String KEY_PREFIX = "pgbus.queue.";

  /**
   * The suffixes of a queue's keys, its {@link QueueLimit flow control}, its encryption ({@code
   * encrypt}, {@link JobCipher}) and whom its handler runs as ({@code run-as}) included.
   */
  public static final List<String> SUFFIXES =
      Stream.concat(
              Stream.of(
                  "job-timeout",
                  "max-attempts",
                  "retry.base",
                  "retry.cap",
                  "encrypt",
                  "run-as",
                  "max-wait"),
              Stream.concat(QueueLimit.SUFFIXES.stream(), FairShare.SUFFIXES.stream()))
          .toList();

  public QueuePolicy {
    QueueNames.require(queue);
    if (jobTimeout != null) {
      jobTimeout(queue).positive(jobTimeout);
    }
    if (maxAttempts != null) {
      maxAttempts(queue).atLeast(maxAttempts, 1);
    }
    if (retryBase != null) {
      retryBase(queue).positive(retryBase);
    }
    if (retryCap != null) {
      retryCap(queue).positive(retryCap);
    }
    if (maxWait != null && (maxWait.isNegative() || maxWait.isZero())) {
      String key = maxWait(queue).key();
      throw new InvalidConfigException(
          key,
          key
              + "="
              + Durations.format(maxWait)
              + " is invalid: use a positive duration (how long a job may wait to start, e.g."
              + " 10m), or leave it unset for no deadline");
    }
  }

  /** The policy of the four execution parts, without a start-by window. */
  public QueuePolicy(
      String queue,
      Duration jobTimeout,
      Integer maxAttempts,
      Duration retryBase,
      Duration retryCap) {
    this(queue, jobTimeout, maxAttempts, retryBase, retryCap, null);
  }

  /** A queue that keeps every global value. */
  public static QueuePolicy none(String queue) {
    return new QueuePolicy(queue, null, null, null, null);
  }

  public static Setting<Duration> jobTimeout(String queue) {
    return range(queue, "job-timeout", ExecutionConfig.JOB_TIMEOUT);
  }

  public static Setting<Integer> maxAttempts(String queue) {
    return Setting.integer(
        KEY_PREFIX + queue + ".max-attempts", EnqueueOptions.DEFAULT_MAX_ATTEMPTS, 1, 1000);
  }

  public static Setting<Duration> retryBase(String queue) {
    return range(queue, "retry.base", RetryPolicy.BASE);
  }

  public static Setting<Duration> retryCap(String queue) {
    return range(queue, "retry.cap", RetryPolicy.CAP);
  }

  /** {@code pgbus.queue.<name>.max-wait}: unset by default, 1 ms to the schedule horizon. */
  public static Setting<Duration> maxWait(String queue) {
    return Setting.derivedDuration(
        KEY_PREFIX + queue + ".max-wait",
        "none",
        Duration.ofMillis(1),
        EnqueueOptions.MAX_SCHEDULE_AHEAD);
  }

  /** The queue's variant of a global duration setting: same range, the global as its default. */
  private static Setting<Duration> range(String queue, String suffix, Setting<Duration> global) {
    return Setting.derivedDuration(
        KEY_PREFIX + queue + "." + suffix, global.key(), global.min(), global.max());
  }

  /** The queue's policy as the source has it; parts it does not set are null. */
  public static QueuePolicy from(String queue, SettingSource s) {
    return new QueuePolicy(
        queue,
        s.value(jobTimeout(queue)),
        s.value(maxAttempts(queue)),
        s.value(retryBase(queue)),
        s.value(retryCap(queue)),
        s.value(maxWait(queue)));
  }

  /** This policy, with the parts it leaves open taken from {@code under}. */
  public QueuePolicy over(QueuePolicy under) {
    Objects.requireNonNull(under, "under");
    return new QueuePolicy(
        queue,
        jobTimeout != null ? jobTimeout : under.jobTimeout,
        maxAttempts != null ? maxAttempts : under.maxAttempts,
        retryBase != null ? retryBase : under.retryBase,
        retryCap != null ? retryCap : under.retryCap,
        maxWait != null ? maxWait : under.maxWait);
  }

  /** Whether it overrides nothing. */
  public boolean isEmpty() {
    return jobTimeout == null
        && maxAttempts == null
        && retryBase == null
        && retryCap == null
        && maxWait == null;
  }

  /**
   * The queue's effective execution: its own parts over the globals, checked as the globals are (a
   * base no longer than the cap), naming the queue's key.
   */
  Resolved resolve(ExecutionConfig global) {
    Duration timeout = jobTimeout != null ? jobTimeout : global.jobTimeout();
    RetryPolicy retry = global.retry();
    if (retryBase != null || retryCap != null) {
      Duration base = retryBase != null ? retryBase : retry.base();
      Duration cap = retryCap != null ? retryCap : retry.cap();
      Setting.notLonger(
          retryBase != null ? retryBase(queue) : RetryPolicy.BASE,
          base,
          retryCap != null ? retryCap(queue) : RetryPolicy.CAP,
          cap);
      retry = new RetryPolicy(base, cap, retry.jitter());
    }
    return new Resolved(timeout, maxAttempts, retry);
  }

  /** A queue's effective execution; {@code maxAttempts} null: the enqueue's own. */
  record Resolved(Duration jobTimeout, Integer maxAttempts, RetryPolicy retry) {}
}

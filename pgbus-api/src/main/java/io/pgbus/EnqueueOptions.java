package io.pgbus;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * How a job is enqueued: when it may run, its priority inside its queue, and how many attempts it
 * gets. Immutable; each {@code with...} method returns a copy.
 *
 * <p>Priority: a <em>lower</em> number runs first inside a queue (0 is the default; the range is
 * {@value #MIN_PRIORITY} to {@value #MAX_PRIORITY}). Across queues, a capsule's queue order wins
 * over priority.
 */
public final class EnqueueOptions {

  public static final int DEFAULT_MAX_ATTEMPTS = 25;
  public static final int MIN_PRIORITY = -100;
  public static final int MAX_PRIORITY = 100;

  private static final EnqueueOptions DEFAULTS =
      new EnqueueOptions(null, null, 0, DEFAULT_MAX_ATTEMPTS);

  private final Instant runAt;
  private final Duration delay;
  private final int priority;
  private final int maxAttempts;

  private EnqueueOptions(Instant runAt, Duration delay, int priority, int maxAttempts) {
    this.runAt = runAt;
    this.delay = delay;
    this.priority = priority;
    this.maxAttempts = maxAttempts;
  }

  /** Run now, priority 0, {@value #DEFAULT_MAX_ATTEMPTS} attempts. */
  public static EnqueueOptions defaults() {
    return DEFAULTS;
  }

  /** Runs no earlier than {@code runAt}. Replaces any delay. */
  public EnqueueOptions withRunAt(Instant runAt) {
    return new EnqueueOptions(Objects.requireNonNull(runAt, "runAt"), null, priority, maxAttempts);
  }

  /** Runs no earlier than {@code delay} after the database's clock at enqueue. Replaces runAt. */
  public EnqueueOptions withDelay(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new InvalidJobException(null, "delay must not be negative, was " + delay);
    }
    return new EnqueueOptions(null, delay, priority, maxAttempts);
  }

  public EnqueueOptions withPriority(int priority) {
    if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
      throw new InvalidJobException(
          null,
          "priority "
              + priority
              + " is out of range: use "
              + MIN_PRIORITY
              + " to "
              + MAX_PRIORITY
              + " (lower runs first)");
    }
    return new EnqueueOptions(runAt, delay, priority, maxAttempts);
  }

  public EnqueueOptions withMaxAttempts(int maxAttempts) {
    if (maxAttempts < 1 || maxAttempts > 1000) {
      throw new InvalidJobException(
          null, "maxAttempts " + maxAttempts + " is out of range: use 1 to 1000");
    }
    return new EnqueueOptions(runAt, delay, priority, maxAttempts);
  }

  /** The absolute start time, or {@code null}. */
  public Instant runAt() {
    return runAt;
  }

  /** The delay relative to the database clock, or {@code null}. */
  public Duration delay() {
    return delay;
  }

  public int priority() {
    return priority;
  }

  public int maxAttempts() {
    return maxAttempts;
  }

  @Override
  public String toString() {
    return "EnqueueOptions[runAt="
        + runAt
        + ", delay="
        + delay
        + ", priority="
        + priority
        + ", maxAttempts="
        + maxAttempts
        + "]";
  }
}

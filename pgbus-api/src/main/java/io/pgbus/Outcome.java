package io.pgbus;

import java.time.Duration;
import java.util.Objects;

/**
 * How a job attempt ended. Outcomes are values: a handler returns one, and the state change commits
 * in the handler's transaction.
 */
public final class Outcome {

  /** What happens to the job next. */
  public enum Kind {
    /** Done; the job becomes {@code completed}. */
    COMPLETE,
    /** Failed; retried with backoff, or {@code dead} after the last attempt. */
    RETRY,
    /** Try again after a delay without spending an attempt. */
    SNOOZE,
    /** Stop for good; the job becomes {@code cancelled}. */
    CANCEL
  }

  private static final Outcome COMPLETE = new Outcome(Kind.COMPLETE, null, null);

  private final Kind kind;
  private final Duration delay;
  private final String reason;

  private Outcome(Kind kind, Duration delay, String reason) {
    this.kind = kind;
    this.delay = delay;
    this.reason = reason;
  }

  public static Outcome complete() {
    return COMPLETE;
  }

  /**
   * Fails this attempt without throwing: business writes commit, and the job is retried with the
   * configured backoff (or becomes dead after its last attempt).
   */
  public static Outcome retry(String reason) {
    return new Outcome(Kind.RETRY, null, Objects.requireNonNull(reason, "reason"));
  }

  /**
   * Runs the job again after {@code delay}, at most {@link EnqueueOptions#MAX_SCHEDULE_AHEAD}; the
   * attempt is given back.
   */
  public static Outcome snooze(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("snooze delay must not be negative, was " + delay);
    }
    EnqueueOptions.requireWithinHorizon("snooze delay", delay);
    return new Outcome(Kind.SNOOZE, delay, null);
  }

  public static Outcome cancel(String reason) {
    return new Outcome(Kind.CANCEL, null, Objects.requireNonNull(reason, "reason"));
  }

  public Kind kind() {
    return kind;
  }

  /** The snooze delay, or {@code null}. */
  public Duration delay() {
    return delay;
  }

  /** The reason given to retry or cancel, or {@code null}. */
  public String reason() {
    return reason;
  }

  @Override
  public String toString() {
    return kind
        + (delay != null ? "(" + delay + ")" : "")
        + (reason != null ? "(" + reason + ")" : "");
  }
}

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

  /**
   * The largest job result, in bytes of its UTF-8 JSON text: 64 KiB. A larger result fails the
   * attempt (the database refuses it too). Keep large data elsewhere and return a reference.
   */
  public static final int MAX_RESULT_BYTES = 65536;

  private static final Outcome COMPLETE = new Outcome(Kind.COMPLETE, null, null, null, null);

  private final Kind kind;
  private final Duration delay;
  private final String reason;
  private final Object result;
  private final String resultJson;

  private Outcome(Kind kind, Duration delay, String reason, Object result, String resultJson) {
    this.kind = kind;
    this.delay = delay;
    this.reason = reason;
    this.result = result;
    this.resultJson = resultJson;
  }

  public static Outcome complete() {
    return COMPLETE;
  }

  /**
   * Done, with a small result stored with the job in the completing transaction. The Jakarta
   * runtime maps {@code result} to JSON with JSON-B, as it maps payloads; at most {@link
   * #MAX_RESULT_BYTES} of JSON.
   */
  public static Outcome complete(Object result) {
    return new Outcome(Kind.COMPLETE, null, null, Objects.requireNonNull(result, "result"), null);
  }

  /**
   * Done, with a result given as JSON text (for handlers without JSON-B, and the plain Java
   * engine); at most {@link #MAX_RESULT_BYTES}. The text is not parsed here: PostgreSQL refuses
   * JSON that is not valid, and the attempt fails.
   */
  public static Outcome completeJson(String resultJson) {
    return new Outcome(
        Kind.COMPLETE, null, null, null, Objects.requireNonNull(resultJson, "resultJson"));
  }

  /**
   * Fails this attempt without throwing: business writes commit, and the job is retried with the
   * configured backoff (or becomes dead after its last attempt).
   */
  public static Outcome retry(String reason) {
    return new Outcome(Kind.RETRY, null, Objects.requireNonNull(reason, "reason"), null, null);
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
    return new Outcome(Kind.SNOOZE, delay, null, null, null);
  }

  public static Outcome cancel(String reason) {
    return new Outcome(Kind.CANCEL, null, Objects.requireNonNull(reason, "reason"), null, null);
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

  /** The result object given to {@link #complete(Object)}, or {@code null}. */
  public Object result() {
    return result;
  }

  /** The result as JSON text given to {@link #completeJson(String)}, or {@code null}. */
  public String resultJson() {
    return resultJson;
  }

  /** Whether this outcome carries a result, as an object or as JSON text. */
  public boolean hasResult() {
    return result != null || resultJson != null;
  }

  @Override
  public String toString() {
    return kind
        + (delay != null ? "(" + delay + ")" : "")
        + (reason != null ? "(" + reason + ")" : "");
  }
}

package io.pgbus.test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What else a job must have, beyond its queue and payload, for {@link PgbusAssertions} to count it
 * (River's {@code RequireInsertedOpts}). Immutable; each method returns a copy. Unset properties
 * match anything.
 *
 * <pre>{@code
 * requireEnqueued(c, "emails", new Welcome(42), Expect.any().priority(-5).delay(Duration.ofHours(1)));
 * }</pre>
 */
public final class Expect {

  private static final Expect ANY = new Expect(null, null, null, null, null, null, null);

  private final String state;
  private final Integer priority;
  private final Integer maxAttempts;
  private final String uniqueKey;
  private final String correlationId;
  private final Instant runAt;
  private final Duration delay;

  private Expect(
      String state,
      Integer priority,
      Integer maxAttempts,
      String uniqueKey,
      String correlationId,
      Instant runAt,
      Duration delay) {
    this.state = state;
    this.priority = priority;
    this.maxAttempts = maxAttempts;
    this.uniqueKey = uniqueKey;
    this.correlationId = correlationId;
    this.runAt = runAt;
    this.delay = delay;
  }

  /** Any job of the queue with the payload, in any state. */
  public static Expect any() {
    return ANY;
  }

  /** In this state now: {@code available}, {@code scheduled}, {@code completed}, ... */
  public Expect state(String v) {
    return new Expect(
        Objects.requireNonNull(v, "state"),
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        runAt,
        delay);
  }

  public Expect priority(int v) {
    return new Expect(state, v, maxAttempts, uniqueKey, correlationId, runAt, delay);
  }

  public Expect maxAttempts(int v) {
    return new Expect(state, priority, v, uniqueKey, correlationId, runAt, delay);
  }

  public Expect uniqueKey(String v) {
    return new Expect(
        state,
        priority,
        maxAttempts,
        Objects.requireNonNull(v, "uniqueKey"),
        correlationId,
        runAt,
        delay);
  }

  public Expect correlationId(String v) {
    return new Expect(
        state,
        priority,
        maxAttempts,
        uniqueKey,
        Objects.requireNonNull(v, "correlationId"),
        runAt,
        delay);
  }

  /**
   * Due at this instant, to the microsecond PostgreSQL keeps ({@code EnqueueOptions.withRunAt}).
   * Check it before advancing a {@link TestClock}, which moves the run_at of waiting jobs.
   */
  public Expect runAt(Instant v) {
    return new Expect(
        state,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        Objects.requireNonNull(v, "runAt").truncatedTo(ChronoUnit.MICROS),
        delay);
  }

  /**
   * Due this long after its enqueue ({@code EnqueueOptions.withDelay}): run_at minus created_at,
   * which are exact, as both come from the enqueuing transaction's clock.
   */
  public Expect delay(Duration v) {
    return new Expect(
        state,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        runAt,
        Objects.requireNonNull(v, "delay"));
  }

  /** How {@code job} differs from this expectation; empty when it matches. */
  List<String> differences(EnqueuedJob job) {
    var out = new ArrayList<String>();
    differ(out, "state", state, job.state());
    differ(out, "priority", priority, job.priority());
    differ(out, "maxAttempts", maxAttempts, job.maxAttempts());
    differ(out, "uniqueKey", uniqueKey, job.uniqueKey());
    differ(out, "correlationId", correlationId, job.correlationId());
    differ(out, "runAt", runAt, job.runAt());
    differ(out, "delay", delay, job.delay());
    return out;
  }

  private static void differ(List<String> out, String name, Object wanted, Object actual) {
    if (wanted != null && !wanted.equals(actual)) {
      out.add(name + " " + actual + " (expected " + wanted + ")");
    }
  }

  @Override
  public String toString() {
    var parts = new ArrayList<String>();
    addIfSet(parts, "state", state);
    addIfSet(parts, "priority", priority);
    addIfSet(parts, "maxAttempts", maxAttempts);
    addIfSet(parts, "uniqueKey", uniqueKey);
    addIfSet(parts, "correlationId", correlationId);
    addIfSet(parts, "runAt", runAt);
    addIfSet(parts, "delay", delay);
    return parts.isEmpty() ? "any" : String.join(", ", parts);
  }

  private static void addIfSet(List<String> parts, String name, Object value) {
    if (value != null) {
      parts.add(name + " " + value);
    }
  }
}

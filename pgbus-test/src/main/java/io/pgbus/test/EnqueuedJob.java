package io.pgbus.test;

import java.lang.reflect.Type;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A job as its row in {@code pgbus.job} reads now: what {@link PgbusAssertions} found and returns
 * for further checks.
 *
 * @param state {@code scheduled}, {@code available}, {@code running}, {@code retryable}, {@code
 *     completed}, {@code cancelled} or {@code dead} (docs/schema.md)
 * @param payloadJson the payload as the database returns it ({@code jsonb} text)
 * @param runAt when it may run, in the database's time (a {@link TestClock} moves it back as the
 *     clock advances)
 * @param errors the recorded errors, newest first (at most 10)
 */
public record EnqueuedJob(
    long id,
    String queue,
    String state,
    int priority,
    String payloadJson,
    int attempt,
    int maxAttempts,
    Instant runAt,
    Instant createdAt,
    String uniqueKey,
    String correlationId,
    String enqueuedBy,
    List<String> errors) {

  public EnqueuedJob {
    errors = List.copyOf(errors);
  }

  /** The payload mapped to {@code type} with JSON-B, as a handler would receive it. */
  public <T> T payload(Class<T> type) {
    return type.cast(Json.from(payloadJson, type));
  }

  /** The payload mapped to a generic type, such as a {@code List<Item>}. */
  @SuppressWarnings("unchecked")
  public <T> T payload(Type type) {
    return (T) Json.from(payloadJson, type);
  }

  /** How long after its enqueue it was due: the delay it was enqueued with, if any. */
  public Duration delay() {
    return Duration.between(createdAt, runAt);
  }

  /** The newest recorded error, or {@code null}. */
  public String lastError() {
    return errors.isEmpty() ? null : errors.get(0);
  }

  @Override
  public String toString() {
    return "job "
        + id
        + " ["
        + state
        + ", priority "
        + priority
        + ", attempt "
        + attempt
        + "/"
        + maxAttempts
        + (uniqueKey == null ? "" : ", unique key " + uniqueKey)
        + "] "
        + payloadJson;
  }
}

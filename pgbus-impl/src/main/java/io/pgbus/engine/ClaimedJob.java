package io.pgbus.engine;

import io.pgbus.JobContext;
import java.time.Instant;

/**
 * A job this worker holds: claimed, {@code running}, leased to it. {@code attempt} is the fence:
 * every state change after the claim matches on (id, attempt, state = running), so a worker whose
 * lease was rescued and reclaimed elsewhere can no longer change the job. {@code runAt} is when the
 * job became due (its enqueue time, unless delayed or retried), for wake-latency metrics. {@code
 * trace} is the enqueuer's W3C trace context, or null (schema V6).
 */
public record ClaimedJob(
    long id,
    String queue,
    int priority,
    String payload,
    int attempt,
    int maxAttempts,
    Instant createdAt,
    Instant runAt,
    TraceContext trace)
    implements JobContext {

  /** A job enqueued in no trace. */
  public ClaimedJob(
      long id,
      String queue,
      int priority,
      String payload,
      int attempt,
      int maxAttempts,
      Instant createdAt,
      Instant runAt) {
    this(id, queue, priority, payload, attempt, maxAttempts, createdAt, runAt, null);
  }
}

package io.pgbus.engine;

import java.time.Instant;

/**
 * A job this worker holds: claimed, {@code running}, leased to it. A plain value, as the claim read
 * it; what its handler may ask while it runs (cancellation, progress, batch and dependency results)
 * is the {@link RunningJob} the runner hands the handler.
 *
 * <p>{@code attempt} is the fence: every state change after the claim matches on (id, attempt,
 * state = running), so a worker whose lease was rescued and reclaimed elsewhere can no longer
 * change the job. {@code runAt} is when the job became due (its enqueue time, unless delayed or
 * retried), for wake-latency metrics. {@code trace} is the enqueuer's W3C trace context, or null
 * (schema V6). {@code attemptBase} is the attempts spent before the job's last replay (V30): this
 * run's attempt is {@code attempt - attemptBase}, and its backoff follows that. {@code runAs} is
 * the enqueuer its handler runs as when its queue runs as the enqueuer, or null (V44). {@code
 * workflowId} is the workflow the job belongs to, or null (V52; read by the claim only for a linked
 * job).
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
    TraceContext trace,
    int attemptBase,
    String runAs,
    Long workflowId) {

  /** A job in no workflow. */
  public ClaimedJob(
      long id,
      String queue,
      int priority,
      String payload,
      int attempt,
      int maxAttempts,
      Instant createdAt,
      Instant runAt,
      TraceContext trace,
      int attemptBase,
      String runAs) {
    this(
        id,
        queue,
        priority,
        payload,
        attempt,
        maxAttempts,
        createdAt,
        runAt,
        trace,
        attemptBase,
        runAs,
        null);
  }

  /** A job without a run-as user. */
  public ClaimedJob(
      long id,
      String queue,
      int priority,
      String payload,
      int attempt,
      int maxAttempts,
      Instant createdAt,
      Instant runAt,
      TraceContext trace,
      int attemptBase) {
    this(
        id,
        queue,
        priority,
        payload,
        attempt,
        maxAttempts,
        createdAt,
        runAt,
        trace,
        attemptBase,
        null);
  }
}

package io.pgbus.engine;

import io.pgbus.JobContext;
import java.time.Instant;

/**
 * A job this worker holds: claimed, {@code running}, leased to it. {@code attempt} is the fence:
 * every state change after the claim matches on (id, attempt, state = running), so a worker whose
 * lease was rescued and reclaimed elsewhere can no longer change the job. {@code runAt} is when the
 * job became due (its enqueue time, unless delayed or retried), for wake-latency metrics. {@code
 * trace} is the enqueuer's W3C trace context, or null (schema V6). {@code cancellation} is this
 * attempt's own: set when an operator cancelled the job while it ran, so the handler can ask.
 * {@code progress} is this attempt's too: its reports, coalesced and written while the handler
 * runs.
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
    Cancellation cancellation,
    JobProgress progress)
    implements JobContext {

  public ClaimedJob {
    java.util.Objects.requireNonNull(cancellation, "cancellation");
    java.util.Objects.requireNonNull(progress, "progress");
  }

  /** A claimed job with its own cancellation and no progress reported yet. */
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
      Cancellation cancellation) {
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
        cancellation,
        new JobProgress());
  }

  /** A claimed job that nobody asked to cancel yet. */
  public ClaimedJob(
      long id,
      String queue,
      int priority,
      String payload,
      int attempt,
      int maxAttempts,
      Instant createdAt,
      Instant runAt,
      TraceContext trace) {
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
        new Cancellation());
  }

  @Override
  public boolean cancellationRequested() {
    return cancellation.requested();
  }

  @Override
  public void progress(int percent, String message) {
    JobContext.super.progress(percent, message); // the bounds, with their error text
    progress.report(percent, message);
  }

  @Override
  public java.util.Optional<io.pgbus.BatchSummary> batch() {
    return JobLinks.batch(id);
  }

  @Override
  public java.util.SortedMap<Long, String> batchResults(long afterJobId, int limit) {
    JobContext.super.batchResults(afterJobId, limit); // the bounds, with their error text
    return JobLinks.batchResults(id, afterJobId, limit);
  }

  @Override
  public java.util.Map<Long, String> dependencyResults() {
    return JobLinks.dependencyResults(id);
  }

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

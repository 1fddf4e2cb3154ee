package io.pgbus;

import java.util.List;

/**
 * Enqueues jobs. Inside a Jakarta EE container the insert and its wake-up notification join the
 * caller's JTA transaction: they commit with the caller's business rows, and a rollback leaves
 * nothing behind.
 *
 * <p>Payloads are mapped to JSON with JSON-B. Queue names are identifiers: a lower-case letter
 * followed by lower-case letters, digits or underscores, at most {@value QueueNames#MAX_LENGTH}
 * characters.
 */
public interface JobQueue {

  /** Enqueues one job to run as soon as a worker is free and returns its id. */
  default long enqueue(String queue, Object payload) {
    return enqueue(queue, payload, EnqueueOptions.defaults());
  }

  /** Enqueues one job with the given options and returns its id. */
  long enqueue(String queue, Object payload, EnqueueOptions options);

  /**
   * Enqueues many jobs of one queue in a single statement and returns their ids in input order.
   * The batch sends one notification per queue, not one per job.
   */
  List<Long> enqueueAll(String queue, List<?> payloads, EnqueueOptions options);

  /**
   * Cancels a job that has not started yet. Returns {@code false} when the job is running or
   * already finished.
   */
  boolean cancel(long jobId);

  /** Makes a dead job available again with a fresh attempt budget; returns whether it was dead. */
  boolean replay(long jobId);
}

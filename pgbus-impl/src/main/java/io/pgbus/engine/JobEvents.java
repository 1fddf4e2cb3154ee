package io.pgbus.engine;

import io.pgbus.Outcome;

/**
 * Observes jobs as they run, for metrics and tests. Called on the worker thread; implementations
 * must be quick and must not throw.
 */
public interface JobEvents {

  JobEvents NONE = new JobEvents() {};

  /** A handler is about to run. */
  default void started(ClaimedJob job) {}

  /**
   * The attempt ended. {@code kind} is what the job became: COMPLETE, RETRY (retryable), SNOOZE,
   * CANCEL, or {@code null} for dead or a lost lease.
   */
  default void finished(ClaimedJob job, Outcome.Kind kind, long nanos) {}
}

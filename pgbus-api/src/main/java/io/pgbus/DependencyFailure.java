package io.pgbus;

/**
 * What a job that waits on another ({@link EnqueueOptions#afterJobs}) does when that dependency
 * ends without completing: it died (its last attempt failed) or was cancelled. Either way the
 * dependent never runs as if the dependency had succeeded. Set per dependency.
 */
public enum DependencyFailure {
  /**
   * The dependent is cancelled in the same transaction (the default), and its own dependents and
   * batch hear of it as of any cancelled job.
   */
  CANCEL,
  /**
   * The dependent keeps waiting (state {@code scheduled}, far ahead): a {@linkplain JobQueue#replay
   * replay} of the dead dependency that then completes releases it; an operator may also cancel it.
   */
  HOLD
}

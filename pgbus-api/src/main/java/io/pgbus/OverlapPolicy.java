package io.pgbus;

/**
 * What a schedule's run does when the job of its previous run is still waiting or running
 * (scheduled, available, running or retryable). The leader decides it from the database, in the
 * transaction that enqueues the run: the previous run's job id is kept on the schedule's row, so
 * the decision holds across JVMs and across a leader change. A manual {@link Schedules#trigger}
 * does not apply it.
 */
public enum OverlapPolicy {
  /** The run is enqueued whatever the previous run does. The default. */
  ALLOW,
  /**
   * The run is not enqueued: it is recorded as skipped (an audit entry {@code schedule_skip} naming
   * the previous run's job, and the schedule's {@link Schedule#lastOutcome}).
   */
  SKIP,
  /**
   * The run is enqueued to wait on the previous run's job ({@link EnqueueOptions#afterJobs}): it
   * starts when that job completed. When the previous run dies or is cancelled, the waiting run is
   * cancelled with it ({@link DependencyFailure#CANCEL}); the next run is then enqueued freely.
   */
  QUEUE,
  /**
   * The previous run's job is cancelled (a waiting one at once, a running one through the same
   * request as {@link JobQueue#cancel}: its handler is asked to stop), then the run is enqueued.
   */
  CANCEL_PREVIOUS
}

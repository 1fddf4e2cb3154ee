package io.pgbus;

/**
 * What a schedule does with runs missed while no leader ran (downtime, a long leader change, a
 * stalled leader). A run is missed when the leader first sees it more than {@link
 * Schedules#MISFIRE_GRACE} after its time; a run seen sooner is enqueued, late, under every policy.
 * Runs that fall while a schedule is paused are never enqueued: resume starts at the next run.
 */
public enum MisfirePolicy {
  /** Missed runs are dropped; the schedule goes on with its next future run. */
  SKIP,
  /** All missed runs together get one run: the latest of them, enqueued late. The default. */
  RUN_ONCE,
  /**
   * Each missed run is enqueued, oldest first, but at most the latest {@link
   * ScheduleDefinition#catchUpLimit()} of them; earlier ones are dropped.
   */
  CATCH_UP
}

package io.pgbus.admin;

import java.time.Instant;

/**
 * What a queue (or every queue) did in one step of {@link JobAdmin#history}: the sums of its
 * minutes, and the timings of the jobs that completed or died in them (their last attempt).
 *
 * @param at the start of the step (UTC, whole minutes)
 * @param completed jobs that completed in the step
 * @param failed attempts that failed in the step (retried later, or the last one of a dead job)
 * @param dead jobs that died in the step
 * @param waitTime from a job's run_at (or its retry's due time) to the start of its attempt; null
 *     when no job completed or died in the step
 * @param runTime from the start of the attempt to its end; null when no job completed or died
 */
public record HistoryPoint(
    Instant at, long completed, long failed, long dead, Percentiles waitTime, Percentiles runTime) {

  /**
   * Percentiles of a duration, in milliseconds. Over a step of one minute of one queue they are the
   * minute's own; over a longer step or several queues each is the highest of the minutes' (the
   * worst minute), since percentiles of parts do not add up to the whole's.
   */
  public record Percentiles(long p50Ms, long p95Ms, long p99Ms) {}
}

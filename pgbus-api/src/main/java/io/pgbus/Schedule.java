package io.pgbus;

import java.time.Instant;

/**
 * A recurring schedule as stored: its definition and its state.
 *
 * @param definition what runs when
 * @param paused a paused schedule enqueues nothing; its runs until {@link Schedules#resume} are
 *     dropped
 * @param lastRun the scheduled time of the latest run enqueued, or null before the first
 * @param nextRun the next run the leader will deal with, or null when the expression has no more
 * @param source {@code config} (made from {@code pgbus.cron.<name>.*} at start) or {@code api}
 * @param updatedAt when the definition or state last changed
 * @param updatedBy who changed it last (caller principal, else the database role)
 * @param problem null for a schedule that runs; otherwise why its stored row cannot run (an unknown
 *     time zone, an expression that does not parse, written by SQL or by another release), naming
 *     the value. Such a schedule enqueues nothing and is skipped by the leader while the others
 *     run; its {@link #definition} holds the stored values unchecked ({@link
 *     ScheduleDefinition#asStored}). Fix it with {@link Schedules#update}, or {@link
 *     Schedules#delete} it.
 * @param lastJobId the job of the latest run the leader dealt with (enqueued, or the previous run's
 *     job when that run was skipped), or null before the first run (and for runs enqueued by a
 *     release before V42): what the {@link OverlapPolicy} reads at the next run
 * @param lastOutcome what the leader did with the latest run: {@code enqueued}, {@code skipped}
 *     (overlap {@link OverlapPolicy#SKIP}), {@code queued} (enqueued after the previous run, {@link
 *     OverlapPolicy#QUEUE}) or {@code cancelled_previous}; null before the first run
 */
public record Schedule(
    ScheduleDefinition definition,
    boolean paused,
    Instant lastRun,
    Instant nextRun,
    String source,
    Instant updatedAt,
    String updatedBy,
    String problem,
    Long lastJobId,
    String lastOutcome) {

  /** A schedule without a recorded run outcome (as before V42). */
  public Schedule(
      ScheduleDefinition definition,
      boolean paused,
      Instant lastRun,
      Instant nextRun,
      String source,
      Instant updatedAt,
      String updatedBy,
      String problem) {
    this(definition, paused, lastRun, nextRun, source, updatedAt, updatedBy, problem, null, null);
  }

  /** A schedule that runs (no {@link #problem}). */
  public Schedule(
      ScheduleDefinition definition,
      boolean paused,
      Instant lastRun,
      Instant nextRun,
      String source,
      Instant updatedAt,
      String updatedBy) {
    this(definition, paused, lastRun, nextRun, source, updatedAt, updatedBy, null);
  }

  /** The schedule's name. */
  public String name() {
    return definition.name();
  }

  /** False when its stored row cannot run: see {@link #problem}. */
  public boolean readable() {
    return problem == null;
  }
}

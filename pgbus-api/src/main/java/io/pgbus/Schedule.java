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
 */
public record Schedule(
    ScheduleDefinition definition,
    boolean paused,
    Instant lastRun,
    Instant nextRun,
    String source,
    Instant updatedAt,
    String updatedBy,
    String problem) {

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

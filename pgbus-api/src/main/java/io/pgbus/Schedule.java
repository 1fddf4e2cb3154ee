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
 */
public record Schedule(
    ScheduleDefinition definition,
    boolean paused,
    Instant lastRun,
    Instant nextRun,
    String source,
    Instant updatedAt,
    String updatedBy) {

  /** The schedule's name. */
  public String name() {
    return definition.name();
  }
}

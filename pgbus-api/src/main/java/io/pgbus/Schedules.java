package io.pgbus;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Recurring schedules stored in the database: create, change, pause, resume, delete and trigger
 * them at run time, from any JVM. Inside a Jakarta EE container every call joins the caller's JTA
 * transaction, like {@link JobQueue#enqueue}: a rollback leaves no schedule change behind.
 *
 * <p>Only the elected maintenance leader enqueues runs, exactly one job per run across all JVMs and
 * leader changes; the job carries the unique key {@code cron:<name>:<instant>} and runs at the
 * run's time. The leader re-reads the schedules at least once per poll ceiling ({@code
 * pgbus.poll-ceiling}, at most a minute), so a change made on any JVM takes effect within that.
 * Runs missed while no leader ran follow the schedule's {@link MisfirePolicy}.
 *
 * <p>Every change (create, update, pause, resume, delete) and every trigger writes an {@linkplain
 * AuditEntry audit entry} with the caller and the time in the same transaction ({@link #history});
 * so do the configuration's crons when the start creates or changes them.
 *
 * <p>Bad input throws {@link InvalidScheduleException} naming the value and the fix, and writes
 * nothing; so does a cron expression that does not parse.
 *
 * <p>A stored row that cannot run (an unknown zone or an expression that does not parse, written by
 * SQL or by another release) never fails a read: {@link #get} and {@link #list} return it with its
 * {@link Schedule#problem}, the leader skips it and runs the others, {@link #update} fixes it and
 * {@link #delete} removes it; {@link #resume} and {@link #trigger} refuse it.
 */
public interface Schedules {

  /** How late a run may be seen and still count as on time, not missed ({@link MisfirePolicy}). */
  Duration MISFIRE_GRACE = Duration.ofMinutes(1);

  /** The most schedules one {@link #list} returns. */
  int MAX_PAGE = 500;

  /** The most audit entries one {@link #history} returns. */
  int MAX_HISTORY = 1000;

  /**
   * Creates a schedule; its first run is the first after now. Returns it as stored.
   *
   * @throws InvalidScheduleException when the expression does not parse or the name is taken
   */
  Schedule create(ScheduleDefinition definition);

  /**
   * Replaces the definition of an existing schedule (it keeps its pause and its last run). When the
   * expression or zone changed, its next run is the first after now under the new ones; otherwise
   * it stays. A schedule made from configuration is overwritten again at the next start. Returns
   * the schedule as stored, or empty when there is none of that name.
   *
   * @throws InvalidScheduleException when the expression does not parse
   */
  Optional<Schedule> update(ScheduleDefinition definition);

  /** Pauses a schedule; false when there is none of that name. Idempotent. */
  boolean pause(String name);

  /**
   * Resumes a paused schedule with its next run after now (runs that fell in the pause are dropped,
   * whatever the misfire policy); false when there is none of that name. Idempotent.
   */
  boolean resume(String name);

  /** Deletes a schedule; false when there was none. No run is enqueued for it after the commit. */
  boolean delete(String name);

  /**
   * Enqueues one job of the schedule now, in the caller's transaction, with its queue, payload and
   * options, whether or not it is paused. It does not count as a run: the last and next runs stay.
   * Returns the job's id, or empty when there is no schedule of that name.
   */
  OptionalLong trigger(String name);

  /**
   * The audit trail of a schedule, newest first: its creates, updates, pauses, resumes, deletes
   * ({@code schedule_create}, ... {@code schedule_delete}) and triggers ({@code schedule_trigger},
   * with the job it enqueued), with who did it and when. Kept after a delete, until audit retention
   * ({@code pgbus.retention.audit}) removes it; empty for a name never used.
   *
   * @param limit 1 to {@value #MAX_HISTORY}
   */
  List<AuditEntry> history(String name, int limit);

  /** One schedule, or empty. */
  Optional<Schedule> get(String name);

  /**
   * Schedules by name, after {@code afterName} (null: from the first), at most {@code limit}.
   *
   * @param limit 1 to {@value #MAX_PAGE}
   */
  List<Schedule> list(String afterName, int limit);
}

package io.pgbus;

import java.time.Instant;

/**
 * One operator action from the audit trail ({@code pgbus.audit}): who cancelled, replayed, retried,
 * deleted, paused or resumed what, or changed or triggered which schedule, and when. Written in the
 * action's own transaction, so a rolled-back action leaves no entry.
 *
 * @param id ascending in commit-independent insertion order
 * @param at the database time of the action's transaction
 * @param actor the caller principal's name, or the database role when there was none
 * @param action {@code cancel}, {@code replay}, {@code retry}, {@code delete}, {@code pause},
 *     {@code resume}, or for a schedule ({@link Schedules#history}) {@code schedule_create}, {@code
 *     schedule_update}, {@code schedule_pause}, {@code schedule_resume}, {@code schedule_delete},
 *     {@code schedule_trigger}
 * @param queue the queue acted on (the job's queue for a job action, the schedule's for a schedule
 *     action)
 * @param jobId the job, or {@code null} for pause, resume and the schedule actions but trigger (the
 *     job it enqueued)
 */
public record AuditEntry(
    long id, Instant at, String actor, String action, String queue, Long jobId) {}

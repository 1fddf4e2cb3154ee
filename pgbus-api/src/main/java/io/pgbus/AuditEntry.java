package io.pgbus;

import java.time.Instant;

/**
 * One operator action from the audit trail ({@code pgbus.audit}): who cancelled, replayed, paused
 * or resumed what, and when. Written in the action's own transaction, so a rolled-back action
 * leaves no entry.
 *
 * @param id ascending in commit-independent insertion order
 * @param at the database time of the action's transaction
 * @param actor the caller principal's name, or the database role when there was none
 * @param action {@code cancel}, {@code replay}, {@code pause} or {@code resume}
 * @param queue the queue acted on (the job's queue for a job action)
 * @param jobId the job, or {@code null} for pause and resume
 */
public record AuditEntry(
    long id, Instant at, String actor, String action, String queue, Long jobId) {}

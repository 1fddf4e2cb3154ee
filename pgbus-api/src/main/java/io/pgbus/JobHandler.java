package io.pgbus;

/**
 * Runs the jobs of one queue. Implement it in a CDI bean annotated with {@link Handles}; the
 * payload type {@code T} is read from the implemented interface and mapped from JSON with JSON-B.
 *
 * <p>The handler runs inside a container-managed JTA transaction, and the job's completion commits
 * in that same transaction: business writes made through the JTA datasource commit if and only if
 * the job is marked done. Return an {@link Outcome} (or {@code null} for {@link
 * Outcome#complete()}) to finish; throw to fail the attempt, which rolls back the business writes
 * and schedules a retry with backoff, or marks the job dead after its last attempt.
 *
 * <p>That is the default, {@link JobTransaction#CONTAINER}. A handler declared with
 * {@code @Handles(value = ..., transaction = JobTransaction.HANDLER)} runs in no transaction of
 * pgbus's instead and opens its own; its job's completion then commits on its own, after the
 * handler returns, so the handler must be idempotent (see {@link JobTransaction#HANDLER}).
 */
@FunctionalInterface
public interface JobHandler<T> {

  Outcome handle(T payload, JobContext context) throws Exception;
}

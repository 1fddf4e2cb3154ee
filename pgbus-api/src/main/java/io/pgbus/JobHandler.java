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
 */
@FunctionalInterface
public interface JobHandler<T> {

  Outcome handle(T payload, JobContext context) throws Exception;
}

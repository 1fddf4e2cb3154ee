package io.pgbus.engine;

import io.pgbus.Outcome;
import java.sql.Connection;

/**
 * Port: runs one claimed job. {@code job} is the handler's {@link io.pgbus.JobContext}, passed
 * rather than found: its payload, its cancellation, its progress and its batch and dependency
 * reads. It is called inside the job's transaction; {@code transaction} is enlisted in it, so
 * business writes made through it commit exactly when the job completes. A container adapter may
 * ignore it and let handlers use the container's transactional datasource, which joins the same
 * transaction. Return {@code null} for {@link Outcome#complete()}; throw to fail the attempt.
 *
 * <p>For a queue in {@link io.pgbus.JobTransaction#HANDLER} mode ({@link
 * Engine.Builder#handlerTransactions}) it is called outside any transaction and {@code transaction}
 * is {@code null}: the function opens its own, and the job's outcome is committed after it returns,
 * in a transaction of its own.
 */
@FunctionalInterface
public interface JobFunction {
  Outcome run(RunningJob job, Connection transaction) throws Exception;
}

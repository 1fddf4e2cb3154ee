package io.pgbus.engine;

import io.pgbus.PgbusException;

/**
 * The identity a job's handler must run as could not be established: the job has no enqueuer to run
 * as, the user is gone from the server's registry, or the server refused the identity. Thrown by
 * the container's {@link JobFunction} before the handler runs. The {@link JobRunner} makes the job
 * dead at once, whatever attempts are left: the same user fails the same way on every retry, and a
 * retry storm would hide the cause. Its error starts with {@link #CATEGORY}.
 */
public final class RunAsUnavailableException extends PgbusException {
  private static final long serialVersionUID = 1L;

  /** The first words of the job's stored error, which operators can search for. */
  public static final String CATEGORY = "run-as identity unavailable";

  public RunAsUnavailableException(String queue, long jobId, String detail, Throwable cause) {
    super(
        queue, jobId, CATEGORY + ": job " + jobId + " of queue '" + queue + "': " + detail, cause);
  }

  /** The first one in {@code t}'s cause chain, or null. */
  static RunAsUnavailableException in(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof RunAsUnavailableException r) {
        return r;
      }
    }
    return null;
  }
}

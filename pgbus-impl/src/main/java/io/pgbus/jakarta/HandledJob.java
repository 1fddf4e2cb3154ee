package io.pgbus.jakarta;

import io.pgbus.JobContext;
import io.pgbus.JobQueue;
import io.pgbus.Outcome;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * The job whose handler runs on this thread: pgbus's one thread-local, kept at the edge where the
 * adapter calls a handler. {@link JobQueue}'s methods take no context, yet a job enqueued from a
 * handler inherits the handled job's correlation id (V7); so the {@code JobQueue} reads the id
 * here, once per call, and passes it on in the enqueue request ({@code NewJob.parentJobId}), with
 * the job's workflow, which the new job joins ({@code NewJob.workflowId}). Nothing below the
 * adapter reads it. Public for pgbus-test, whose plain handlers are called as the runtime's are.
 */
public final class HandledJob {

  private static final ThreadLocal<JobContext> CURRENT = new ThreadLocal<>();

  private HandledJob() {}

  /** Calls {@code handler} with {@code job} current on this thread; restores the one before. */
  public static Outcome call(JobContext job, Callable<Outcome> handler) throws Exception {
    JobContext outer = CURRENT.get();
    CURRENT.set(job);
    try {
      return handler.call();
    } finally {
      if (outer == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(outer);
      }
    }
  }

  /** The id of the job whose handler runs on this thread, or {@code null} outside a handler. */
  public static Long id() {
    JobContext job = CURRENT.get();
    return job == null ? null : job.id();
  }

  /**
   * The workflow of the job whose handler runs on this thread ({@link JobContext#workflowId()}), or
   * {@code null}: outside a handler, or a job in no workflow. What the handler enqueues joins it.
   */
  public static Long workflowId() {
    JobContext job = CURRENT.get();
    if (job == null) {
      return null;
    }
    OptionalLong w = job.workflowId();
    return w.isPresent() ? w.getAsLong() : null;
  }
}

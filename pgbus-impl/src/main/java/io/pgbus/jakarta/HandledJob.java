package io.pgbus.jakarta;

import io.pgbus.JobContext;
import io.pgbus.JobQueue;
import io.pgbus.Outcome;
import java.util.concurrent.Callable;

/**
 * The job whose handler runs on this thread: pgbus's one thread-local, kept at the edge where the
 * adapter calls a handler. {@link JobQueue}'s methods take no context, yet a job enqueued from a
 * handler inherits the handled job's correlation id (V7); so the {@code JobQueue} reads the id
 * here, once per call, and passes it on in the enqueue request ({@code NewJob.parentJobId}).
 * Nothing below the adapter reads it. Public for pgbus-test, whose plain handlers are called as the
 * runtime's are.
 */
public final class HandledJob {

  private static final ThreadLocal<Long> CURRENT = new ThreadLocal<>();

  private HandledJob() {}

  /** Calls {@code handler} with {@code job} current on this thread; restores the one before. */
  public static Outcome call(JobContext job, Callable<Outcome> handler) throws Exception {
    Long outer = CURRENT.get();
    CURRENT.set(job.id());
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
    return CURRENT.get();
  }
}

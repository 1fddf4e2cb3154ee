package io.pgbus.engine;

/**
 * The job whose handler runs on this thread, so that a job enqueued from inside a handler can
 * inherit its correlation id (V7). Set by {@link JobRunner} around the handler call only.
 */
final class CurrentJob {

  private static final ThreadLocal<ClaimedJob> CURRENT = new ThreadLocal<>();

  private CurrentJob() {}

  /** The id of the job being handled on this thread, or {@code null} outside a handler. */
  static Long id() {
    ClaimedJob job = CURRENT.get();
    return job == null ? null : job.id();
  }

  /** Makes {@code job} current and returns the one it replaces, for {@link #restore}. */
  static ClaimedJob enter(ClaimedJob job) {
    ClaimedJob previous = CURRENT.get();
    CURRENT.set(job);
    return previous;
  }

  static void restore(ClaimedJob previous) {
    if (previous == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(previous);
    }
  }
}

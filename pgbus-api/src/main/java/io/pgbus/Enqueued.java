package io.pgbus;

/**
 * What an enqueue did: the id of the job that will run, and whether that job was already there.
 *
 * @param id the new job's id, or, for a duplicate, the id of the job that holds the same queue and
 *     unique key (waiting or running; with {@link EnqueueOptions#forPeriod}, also finished)
 * @param duplicate {@code true} when a job held the unique key, so nothing was inserted and no
 *     notification was sent (it may have been changed in place: see {@code result})
 * @param result what became of the enqueue, in more detail
 */
public record Enqueued(long id, boolean duplicate, Result result) {

  /** What became of an enqueue. */
  public enum Result {
    /** A new job was inserted. */
    INSERTED,
    /** A job held the unique key and was left as it is. */
    DUPLICATE,
    /**
     * A waiting job held the key and was changed in place ({@link EnqueueOptions#replacing}, {@link
     * EnqueueOptions#debounce}).
     */
    REPLACED,
    /**
     * Replace or debounce was asked, but the job that holds the key is running (or, with a period,
     * finished): it is never changed, and nothing was inserted.
     */
    NOT_REPLACED
  }

  public Enqueued {
    if (result == null) {
      throw new IllegalArgumentException("result must not be null");
    }
    if (duplicate == (result == Result.INSERTED)) {
      throw new IllegalArgumentException(
          "duplicate " + duplicate + " does not match result " + result);
    }
  }

  /** As before results: {@link Result#DUPLICATE} or {@link Result#INSERTED}. */
  public Enqueued(long id, boolean duplicate) {
    this(id, duplicate, duplicate ? Result.DUPLICATE : Result.INSERTED);
  }

  /** Whether a new job was inserted. */
  public boolean inserted() {
    return !duplicate;
  }
}

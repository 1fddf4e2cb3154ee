package io.pgbus;

/**
 * What an enqueue did: the id of the job that will run, and whether that job was already there.
 *
 * @param id the new job's id, or, for a duplicate, the id of the waiting or running job that has
 *     the same queue and unique key
 * @param duplicate {@code true} when a job with the same unique key was waiting or running, so
 *     nothing was inserted and no notification was sent
 */
public record Enqueued(long id, boolean duplicate) {

  /** Whether a new job was inserted. */
  public boolean inserted() {
    return !duplicate;
  }
}

package io.pgbus.engine.testing;

import io.pgbus.engine.ClaimedJob;
import java.time.Instant;

/**
 * Claimed jobs made up for tests that need a value without a claim: the record has one constructor,
 * the claim's, and these fill in what such a test does not care about.
 */
public final class ClaimedJobs {

  private ClaimedJobs() {}

  /**
   * Attempt {@code attempt} of job {@code id} of {@code queue}: priority 0, payload {@code {}}, 25
   * attempts, created and due now, in no trace.
   */
  public static ClaimedJob claimed(long id, String queue, int attempt) {
    Instant now = Instant.now();
    return new ClaimedJob(id, queue, 0, "{}", attempt, 25, now, now, null, 0);
  }

  /**
   * The first attempt of job {@code id} of {@code queue}; see {@link #claimed(long, String, int)}.
   */
  public static ClaimedJob claimed(long id, String queue) {
    return claimed(id, queue, 1);
  }

  /**
   * {@code job} as the next claim holds it, one attempt later: what a worker whose lease was
   * rescued still holds is this job's stale fence.
   */
  public static ClaimedJob nextAttempt(ClaimedJob job) {
    return new ClaimedJob(
        job.id(),
        job.queue(),
        job.priority(),
        job.payload(),
        job.attempt() + 1,
        job.maxAttempts(),
        job.createdAt(),
        job.runAt(),
        job.trace(),
        job.attemptBase());
  }
}

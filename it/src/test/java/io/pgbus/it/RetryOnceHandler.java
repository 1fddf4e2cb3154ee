package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Fails a job's first attempt when its marker says so, then completes it; a marker whose text
 * starts with {@code block} holds its slot for eight seconds first, to keep the capsule busy.
 * Backoff is exactly two seconds (with {@code pgbus.retry.jitter=0}).
 */
@ApplicationScoped
@Handles(value = "it_retry_wake", retryBase = "2s", retryCap = "2s")
public class RetryOnceHandler implements JobHandler<Marker> {

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    if (marker.text.startsWith("block")) {
      Thread.sleep(8_000);
    } else if (marker.fail && context.attempt() == 1) {
      throw new IllegalStateException("fails its first attempt on purpose");
    }
    return Outcome.complete();
  }
}

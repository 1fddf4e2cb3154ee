package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/** Fails every job's first attempt and completes its second: a retry to time. */
@ApplicationScoped
@Handles("it_retry_wake")
public class RetryOnceHandler implements JobHandler<Marker> {

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    if (context.attempt() == 1) {
      throw new IllegalStateException("fails its first attempt: " + marker.text);
    }
    return Outcome.complete();
  }
}

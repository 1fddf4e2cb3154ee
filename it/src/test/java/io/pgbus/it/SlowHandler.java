package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Hangs until interrupted, so its jobs end only by their job timeout. Its queues carry a policy on
 * the annotation; {@link QueuePolicyIT} overrides part of it in the configuration.
 */
@ApplicationScoped
@Handles(
    value = {"it_slow", "it_slow_cfg"},
    jobTimeout = "500ms",
    maxAttempts = 1)
public class SlowHandler implements JobHandler<Marker> {

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    Thread.sleep(60_000); // the watchdog's interrupt ends it
    return Outcome.complete();
  }
}

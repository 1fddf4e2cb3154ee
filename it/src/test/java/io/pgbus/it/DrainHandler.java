package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;

/**
 * Works for a while: a short job well within {@code pgbus.drain-timeout} of {@link
 * UndeployDrainIT}, a long one far beyond it.
 */
@ApplicationScoped
@Handles({"it_drain_short", "it_drain_long"})
public class DrainHandler implements JobHandler<Marker> {

  static final Duration SHORT = Duration.ofSeconds(4);
  static final Duration LONG = Duration.ofMinutes(5);

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    Thread.sleep((context.queue().equals("it_drain_short") ? SHORT : LONG).toMillis());
    return Outcome.complete();
  }
}

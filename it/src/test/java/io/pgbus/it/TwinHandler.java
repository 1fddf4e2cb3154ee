package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Completes every job of it_twin, the queue both applications of {@link SchemaInstancesIT} read.
 */
@ApplicationScoped
@Handles("it_twin")
public class TwinHandler implements JobHandler<Marker> {

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    return Outcome.complete();
  }
}

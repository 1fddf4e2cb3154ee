package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Completes every job and writes nothing, for fault tests that only need to see a job reach {@code
 * completed}, on whichever database their engine runs.
 */
@ApplicationScoped
@Handles({"it_kill", "it_late", "it_after_commit"})
public class CompletingHandler implements JobHandler<Marker> {

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    return Outcome.complete();
  }
}

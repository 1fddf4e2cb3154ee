package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/** Runs until its job is cancelled (at most a minute): the workflow is cancelled meanwhile. */
@ApplicationScoped
@Handles("it_wf_slow")
public class WorkflowSlowHandler implements JobHandler<WorkflowStep> {

  @Override
  public Outcome handle(WorkflowStep step, JobContext context) throws Exception {
    WorkflowRuns.ran(context.id());
    long end = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < end && !context.cancellationRequested()) {
      Thread.sleep(50);
    }
    return Outcome.complete();
  }
}

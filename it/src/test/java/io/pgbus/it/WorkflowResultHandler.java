package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Completes {@link WorkflowIT}'s jobs; the node {@code charge} with the result {@code
 * {"approved":true}}, which the workflow's result edges test.
 */
@ApplicationScoped
@Handles("it_wf")
public class WorkflowResultHandler implements JobHandler<WorkflowStep> {

  @Override
  public Outcome handle(WorkflowStep step, JobContext context) {
    WorkflowRuns.ran(context.id());
    return "charge".equals(step.node)
        ? Outcome.completeJson("{\"approved\":true,\"amount\":42}")
        : Outcome.complete();
  }
}

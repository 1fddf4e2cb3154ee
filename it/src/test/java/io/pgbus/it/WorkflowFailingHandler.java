package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/** Fails every time: {@link WorkflowIT}'s node with one attempt dies at once. */
@ApplicationScoped
@Handles("it_wf_fail")
public class WorkflowFailingHandler implements JobHandler<WorkflowStep> {

  @Override
  public Outcome handle(WorkflowStep step, JobContext context) {
    WorkflowRuns.ran(context.id());
    throw new IllegalStateException("the payment service said no to " + step.node);
  }
}

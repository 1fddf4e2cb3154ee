package io.pgbus.it;

/** The payload of {@link WorkflowIT}'s jobs: the node it is, which its handler records. */
public class WorkflowStep {
  public String node;

  public WorkflowStep() {}

  WorkflowStep(String node) {
    this.node = node;
  }
}

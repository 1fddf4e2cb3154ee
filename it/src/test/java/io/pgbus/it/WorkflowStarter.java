package io.pgbus.it;

import io.pgbus.EnqueueOptions;
import io.pgbus.EnqueuedWorkflow;
import io.pgbus.JobQueue;
import io.pgbus.Workflow;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.TreeMap;

/**
 * Enqueues {@link WorkflowIT}'s workflow in its container-managed transaction, as an application
 * would:
 *
 * <pre>
 *   charge ──result $.approved == true──► approved ──► ship (slow) ──► notify
 *          ──result $.approved == false─► rejected (not taken)
 *   pay (dies) ──on failure──► compensate
 *              ──success─────► receipt (cancelled: its parent died)
 * </pre>
 */
@Stateless
public class WorkflowStarter {

  @Inject JobQueue jobs;

  /** The workflow's id and its node → job id. */
  public Map<String, Long> start(String name) {
    EnqueueOptions once = EnqueueOptions.defaults().withMaxAttempts(1);
    Workflow w =
        Workflow.named(name)
            .node("charge", "it_wf", new WorkflowStep("charge"))
            .node("approved", "it_wf", new WorkflowStep("approved"))
            .onResult("charge", "$.approved == true")
            .node("rejected", "it_wf", new WorkflowStep("rejected"))
            .onResult("charge", "$.approved == false")
            .node("ship", "it_wf_slow", new WorkflowStep("ship"))
            .after("approved")
            .node("notify", "it_wf", new WorkflowStep("notify"))
            .after("ship")
            .node("pay", "it_wf_fail", new WorkflowStep("pay"), once)
            .node("compensate", "it_wf", new WorkflowStep("compensate"))
            .onFailure("pay")
            .node("receipt", "it_wf", new WorkflowStep("receipt"))
            .after("pay");
    EnqueuedWorkflow e = jobs.enqueueWorkflow(w);
    Map<String, Long> ids = new TreeMap<>(e.jobIds());
    ids.put("workflow", e.workflowId());
    return ids;
  }
}

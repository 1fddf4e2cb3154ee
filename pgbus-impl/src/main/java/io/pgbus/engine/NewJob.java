package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import java.util.Objects;

/**
 * A job to insert: a validated queue name, its JSON payload, its options, who enqueues it ({@code
 * null}: the database role is recorded; see V7__audit.sql), and the job whose handler enqueues it
 * ({@code parentJobId}, null outside a handler). A job without a correlation id of its own inherits
 * its parent's. The parent is told, never looked up: the adapter that called the handler knows it
 * and puts it here, once, at the edge. {@code runAs} is whom its handler runs as (a queue with
 * {@code pgbus.queue.<name>.run-as=enqueuer}), else null. {@code workflowId} is the workflow of the
 * handled job (null: none; the adapter reads it, as the parent, from the running job's context):
 * the new job joins it (fan-out, {@code pgbus.join_workflow}).
 */
public record NewJob(
    String queue,
    String payloadJson,
    EnqueueOptions options,
    String enqueuedBy,
    Long parentJobId,
    String runAs,
    Long workflowId) {

  /** The longest principal name {@code pgbus.job.run_as} takes (its CHECK, V44). */
  public static final int RUN_AS_MAX_LENGTH = 256;

  public NewJob(
      String queue,
      String payloadJson,
      EnqueueOptions options,
      String enqueuedBy,
      Long parentJobId,
      String runAs) {
    this(queue, payloadJson, options, enqueuedBy, parentJobId, runAs, null);
  }

  public NewJob(
      String queue,
      String payloadJson,
      EnqueueOptions options,
      String enqueuedBy,
      Long parentJobId) {
    this(queue, payloadJson, options, enqueuedBy, parentJobId, null);
  }

  public NewJob(String queue, String payloadJson, EnqueueOptions options, String enqueuedBy) {
    this(queue, payloadJson, options, enqueuedBy, null);
  }

  public NewJob(String queue, String payloadJson, EnqueueOptions options) {
    this(queue, payloadJson, options, null, null);
  }

  public NewJob {
    QueueNames.require(queue);
    Objects.requireNonNull(options, "options");
    if (runAs != null && (runAs.isEmpty() || runAs.length() > RUN_AS_MAX_LENGTH)) {
      throw new InvalidJobException(
          queue,
          "queue '"
              + queue
              + "' runs its handler as the enqueuer, whose name must be 1 to "
              + RUN_AS_MAX_LENGTH
              + " characters, but it has "
              + runAs.length()
              + ": give the user a shorter name, or run the queue's handler without it (remove"
              + " pgbus.queue."
              + queue
              + ".run-as)");
    }
    if (payloadJson == null || payloadJson.isBlank() || payloadJson.strip().equals("null")) {
      throw new InvalidJobException(
          queue, "payload for queue '" + queue + "' is null: pass an object, or {} for no data");
    }
  }

  public static NewJob of(String queue, String payloadJson) {
    return new NewJob(queue, payloadJson, EnqueueOptions.defaults());
  }

  /** This job, enqueued from the handler of job {@code jobId} (null: from no handler). */
  public NewJob withParent(Long jobId) {
    return new NewJob(queue, payloadJson, options, enqueuedBy, jobId, runAs, workflowId);
  }

  /**
   * This job, its handler to run as {@code user} (V44, {@code pgbus.job.run_as}; null: as the
   * container runs handlers without a caller).
   */
  public NewJob withRunAs(String user) {
    return new NewJob(queue, payloadJson, options, enqueuedBy, parentJobId, user, workflowId);
  }

  /**
   * This job, enqueued from the handler of a member of workflow {@code id} (null: of none): it
   * joins the workflow.
   */
  public NewJob inWorkflow(Long id) {
    return new NewJob(queue, payloadJson, options, enqueuedBy, parentJobId, runAs, id);
  }

  /** This job with other options. */
  NewJob withOptions(EnqueueOptions o) {
    return new NewJob(queue, payloadJson, o, enqueuedBy, parentJobId, runAs, workflowId);
  }
}

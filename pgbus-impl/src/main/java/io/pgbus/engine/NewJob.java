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
 * and puts it here, once, at the edge.
 */
public record NewJob(
    String queue, String payloadJson, EnqueueOptions options, String enqueuedBy, Long parentJobId) {

  public NewJob(String queue, String payloadJson, EnqueueOptions options, String enqueuedBy) {
    this(queue, payloadJson, options, enqueuedBy, null);
  }

  public NewJob(String queue, String payloadJson, EnqueueOptions options) {
    this(queue, payloadJson, options, null, null);
  }

  public NewJob {
    QueueNames.require(queue);
    Objects.requireNonNull(options, "options");
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
    return new NewJob(queue, payloadJson, options, enqueuedBy, jobId);
  }

  /** This job with other options. */
  NewJob withOptions(EnqueueOptions o) {
    return new NewJob(queue, payloadJson, o, enqueuedBy, parentJobId);
  }
}

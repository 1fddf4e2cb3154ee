package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import java.util.Objects;

/**
 * A job to insert: a validated queue name, its JSON payload, its options, and who enqueues it
 * ({@code null}: the database role is recorded; see V7__audit.sql).
 */
public record NewJob(String queue, String payloadJson, EnqueueOptions options, String enqueuedBy) {

  public NewJob(String queue, String payloadJson, EnqueueOptions options) {
    this(queue, payloadJson, options, null);
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
}

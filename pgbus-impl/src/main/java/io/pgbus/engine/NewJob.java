package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import java.util.Objects;

/** A job to insert: a validated queue name, its JSON payload and its options. */
public record NewJob(String queue, String payloadJson, EnqueueOptions options) {

  public NewJob {
    QueueNames.require(queue);
    Objects.requireNonNull(options, "options");
    if (payloadJson == null || payloadJson.isBlank() || payloadJson.strip().equals("null")) {
      throw new InvalidJobException(
          queue,
          "payload for queue '" + queue + "' is null: pass an object, or {} for no data");
    }
  }

  public static NewJob of(String queue, String payloadJson) {
    return new NewJob(queue, payloadJson, EnqueueOptions.defaults());
  }
}

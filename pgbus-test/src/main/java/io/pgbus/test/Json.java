package io.pgbus.test;

import io.pgbus.InvalidJobException;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.lang.reflect.Type;

/**
 * Payloads to and from JSON with JSON-B, as the runtime maps them ({@code JtaJobQueue}, {@code
 * HandlerRegistry}); a {@link RawJson} passes as its text.
 */
final class Json {

  private static volatile Jsonb jsonb;

  private Json() {}

  static String of(String queue, Object payload) {
    if (payload instanceof RawJson raw) {
      return raw.text();
    }
    if (payload == null) {
      throw new InvalidJobException(
          queue, "payload for queue '" + queue + "' is null: pass an object, or {} for no data");
    }
    try {
      return jsonb().toJson(payload);
    } catch (RuntimeException e) {
      throw new InvalidJobException(
          queue,
          "the "
              + payload.getClass().getName()
              + " for queue '"
              + queue
              + "' does not map to JSON with JSON-B: "
              + e.getMessage());
    }
  }

  static Object from(String json, Type type) {
    return jsonb().fromJson(json, type);
  }

  static Jsonb jsonb() {
    Jsonb j = jsonb;
    if (j == null) {
      synchronized (Json.class) {
        j = jsonb;
        if (j == null) {
          try {
            j = JsonbBuilder.create();
          } catch (RuntimeException e) {
            throw new IllegalStateException(
                "pgbus-test maps payloads with JSON-B and found no implementation ("
                    + e.getMessage()
                    + "): add org.eclipse:yasson to the test class path",
                e);
          }
          jsonb = j;
        }
      }
    }
    return j;
  }
}

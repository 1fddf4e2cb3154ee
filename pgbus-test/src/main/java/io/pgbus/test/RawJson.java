package io.pgbus.test;

import java.util.Objects;

/**
 * A payload given as JSON text rather than as an object for JSON-B: {@code requireEnqueued(c,
 * "orders", RawJson.of("{\"orderId\": 42}"))}. Compared as {@code jsonb}, so key order and spacing
 * do not matter.
 */
public record RawJson(String text) {

  public RawJson {
    Objects.requireNonNull(text, "text");
  }

  public static RawJson of(String text) {
    return new RawJson(text);
  }
}

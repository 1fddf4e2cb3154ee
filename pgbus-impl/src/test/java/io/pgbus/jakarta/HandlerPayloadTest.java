package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The deploy gate's payload question, answered by JSON-B as the runtime maps a job's payload before
 * its handler runs (Yasson, as the servers' JSON-B).
 */
class HandlerPayloadTest {

  /** A handler's payload type. */
  public static final class Order {
    public long orderId;
    public List<String> items;
  }

  private static final Jsonb JSONB = JsonbBuilder.create();

  @AfterAll
  static void close() throws Exception {
    JSONB.close();
  }

  @Test
  void aPayloadOfTheHandlersShapeMapsAndAnUnknownFieldIsNoMismatch() {
    assertThat(mismatch("{\"orderId\": 7, \"items\": [\"a\"]}")).isNull();
    assertThat(mismatch("{\"orderId\": 7, \"addedLater\": true}")).isNull();
  }

  @Test
  void aPayloadOfAnotherShapeIsAMismatchNamingTheType() {
    assertThat(mismatch("{\"orderId\": \"seven\"}")).startsWith(Order.class.getTypeName() + ": ");
    assertThat(mismatch("{\"items\": {\"a\": 1}}")).isNotNull();
    assertThat(mismatch("[1, 2]")).isNotNull();
  }

  @Test
  void aLongReasonIsCut() {
    String why = HandlerRegistry.bounded("x".repeat(10_000));
    assertThat(why).hasSize(HandlerRegistry.MISMATCH_MAX + 3).endsWith("...");
    assertThat(HandlerRegistry.bounded("short")).isEqualTo("short");
  }

  private static String mismatch(String payload) {
    return HandlerRegistry.payloadMismatch(JSONB, Order.class, payload);
  }
}

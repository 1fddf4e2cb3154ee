package io.pgbus.jakarta.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.engine.QueueLimit;
import jakarta.ws.rs.core.MultivaluedHashMap;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The admin API's inputs of issue #29: a handler name stands for its queues, and a live limit
 * change's parameters are checked with messages that name them and the fix.
 */
class AdminInputsTest {

  private static final Map<String, String> HANDLERS =
      Map.of(
          "orders", "com.acme.OrderHandler",
          "orders_eu", "com.acme.OrderHandler",
          "mail", "com.acme.MailHandler");

  @Test
  void aHandlerStandsForEveryQueueItIsBoundToBySimpleOrFullName() {
    assertThat(HandlerQueues.of("OrderHandler", HANDLERS)).containsExactly("orders", "orders_eu");
    assertThat(HandlerQueues.of("com.acme.MailHandler", HANDLERS)).containsExactly("mail");
  }

  @Test
  void anUnknownHandlerIsRefusedWithTheHandlersThereAre() {
    assertThatThrownBy(() -> HandlerQueues.of("Nope", HANDLERS))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessage("invalid handler 'Nope': use one of MailHandler, OrderHandler")
        .extracting(e -> ((InvalidFilterException) e).field())
        .isEqualTo("handler");
    assertThatThrownBy(() -> HandlerQueues.of("a b", HANDLERS))
        .hasMessageContaining("use a handler's class name");
    assertThatThrownBy(() -> HandlerQueues.of("x".repeat(256), HANDLERS))
        .hasMessageContaining("1 to 255 characters");
    assertThatThrownBy(() -> HandlerQueues.of("Any", Map.of()))
        .hasMessageContaining("this application has no handler");
  }

  @Test
  void aScheduleBodyTakesAnOverlapPolicyAndRefusesAnUnknownOneWithTheChoices() {
    String body = "{\"cron\": \"0 3 * * *\", \"queue\": \"reports\", \"overlap\": \"%s\"}";
    assertThat(ScheduleBody.definition(body.formatted("cancel_previous"), "nightly").overlap())
        .isEqualTo(io.pgbus.OverlapPolicy.CANCEL_PREVIOUS);
    assertThat(ScheduleBody.definition("{\"cron\": \"@daily\", \"queue\": \"q\"}", "n").overlap())
        .isEqualTo(io.pgbus.OverlapPolicy.ALLOW);
    assertThatThrownBy(() -> ScheduleBody.definition(body.formatted("never"), "nightly"))
        .isInstanceOf(io.pgbus.InvalidScheduleException.class)
        .hasMessage("unknown overlap 'never': use allow, skip, queue or cancel_previous");
  }

  private static QueueLimit wanted(String... pairs) {
    var q = new MultivaluedHashMap<String, String>();
    for (int i = 0; i < pairs.length; i += 2) {
      q.add(pairs[i], pairs[i + 1]);
    }
    return QueueLimitResource.wanted("partner", q);
  }

  @Test
  void aLimitChangeTakesTheLimitsGivenAndNoneRemovesThem() {
    QueueLimit l = wanted("globalConcurrency", "5", "rateLimit", "100", "rateWindowMs", "60000");
    assertThat(l.globalConcurrency()).isEqualTo(5);
    assertThat(l.rateWindow()).isEqualTo(Duration.ofMinutes(1));
    assertThat(l.keyConcurrency()).isNull();
    assertThat(wanted().isEmpty()).isTrue();
    assertThat(wanted("keyFifo", "true", "keyFifoSkipDead", "true").fifoSkipsDead()).isTrue();
  }

  @Test
  void aBadLimitIsNamedWithItsBound() {
    assertThatThrownBy(() -> wanted("globalConcurency", "5"))
        .hasMessageContaining("invalid globalConcurency '5': not a limit");
    assertThatThrownBy(() -> wanted("globalConcurrency", "0"))
        .hasMessage("invalid globalConcurrency '0': use 1 to 100000 running jobs of the queue");
    assertThatThrownBy(() -> wanted("globalConcurrency", "x"))
        .hasMessageContaining("use 1 to 100000");
    assertThatThrownBy(() -> wanted("rateWindowMs", "86400001"))
        .hasMessageContaining("1 ms to 1 day");
    assertThatThrownBy(() -> wanted("rateLimit", "10"))
        .hasMessageContaining("invalid rateWindowMs");
    assertThatThrownBy(() -> wanted("keyFifoSkipDead", "true"))
        .hasMessageContaining("needs keyFifo=true");
    assertThatThrownBy(() -> wanted("keyFifo", "true", "keyConcurrency", "2"))
        .hasMessageContaining("invalid keyConcurrency '2'");
    assertThatThrownBy(() -> wanted("keyFifo", "yes")).hasMessageContaining("use true or false");
  }
}

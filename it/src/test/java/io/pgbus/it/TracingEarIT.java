package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * pgbus inside a user's EAR (see {@link Ears}) with OpenTelemetry on for that EAR: a client sends
 * an order with its own {@code traceparent}; the server's REST span continues it, the enqueue in
 * that span stores it, and the handler runs in a span of the client's trace.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class TracingEarIT {

  private static final List<String> OTEL =
      List.of(
          "otel.sdk.disabled=false",
          "otel.traces.exporter=none",
          "otel.metrics.exporter=none",
          "otel.logs.exporter=none");

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    List<String> config =
        new ArrayList<>(List.of("pgbus.capsules=trace", "pgbus.capsule.trace.queues=it_trace_ear"));
    config.addAll(OTEL);
    // The otel.* lines also in an EAR library, where docs/wildfly.md tells a user to put them:
    // WildFly reads an EAR's exporter keys only there (OtelMetricsEarIT). Tracing itself turned
    // on from the WAR's lines alone too (measured once without this jar).
    return Ears.of(
            "trace-orders",
            new Class<?>[] {TraceNotingHandler.class},
            config.toArray(String[]::new))
        .addAsLibrary(
            ShrinkWrap.create(JavaArchive.class, "otel-config.jar")
                .addAsManifestResource(
                    new StringAsset(String.join("\n", OTEL) + "\n"),
                    "microprofile-config.properties"));
  }

  @ArquillianResource URL url;

  @Test
  void theHandlerRunsInTheTraceOfTheClientThatPlacedTheOrder() throws Exception {
    String traceId = UUID.randomUUID().toString().replace("-", "");
    String traceparent = "00-" + traceId + "-" + traceId.substring(0, 16) + "-01";
    String orders = Http.root(url) + "/trace-orders/api/orders";
    Http.Response enqueued =
        Http.post(orders + "?queue=it_trace_ear&text=traced-ear", "traceparent", traceparent);
    assertEquals(200, enqueued.status(), enqueued.body());
    long id = Long.parseLong(enqueued.body().strip());

    String[] handled = {""};
    Await.until(
        "job " + id + "'s handler to note its trace",
        Duration.ofSeconds(60),
        () -> {
          handled[0] = Http.get(orders + "/" + id + "/handled").body().strip();
          return !handled[0].isEmpty();
        });
    assertEquals(traceId, handled[0], "the handler's trace id (all zeros: it ran in no span)");
  }
}

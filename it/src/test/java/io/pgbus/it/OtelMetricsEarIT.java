package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.OtlpMetrics;
import io.pgbus.it.support.OtlpReceiver;
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
 * pgbus inside a user's EAR (see {@link Ears}) with pgbus.metrics left at auto: on WildFly, which
 * has no MP Metrics, auto picks OpenTelemetry; on Liberty, whose test server also has mpMetrics,
 * the test asks for otel. The collector stand-in runs in the test JVM and sees a counter move.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class OtelMetricsEarIT {

  private static final int PORT = OtlpReceiver.freePort();

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    List<String> config =
        new ArrayList<>(List.of("pgbus.capsules=orders", "pgbus.capsule.orders.queues=it_tx"));
    if (!"wildfly".equals(System.getProperty("pgbus.it.server"))) {
      config.add("pgbus.metrics=otel");
    }
    config.addAll(OtlpReceiver.config(PORT));
    // WildFly sets up an EAR's OpenTelemetry SDK from MP Config seen at the EAR level: the WAR's
    // microprofile-config.properties is not, so the otel.* lines go in an EAR library as well.
    return Ears.of("otel-orders", config.toArray(String[]::new))
        .addAsLibrary(
            ShrinkWrap.create(JavaArchive.class, "otel-config.jar")
                .addAsManifestResource(
                    new StringAsset(String.join("\n", OtlpReceiver.config(PORT)) + "\n"),
                    "microprofile-config.properties"));
  }

  @ArquillianResource URL url;

  @Test
  void theEarsCompletionsReachTheCollector() throws Exception {
    try (OtlpReceiver receiver = new OtlpReceiver(PORT)) {
      String orders = Http.root(url) + "/otel-orders/api/orders";
      for (int i = 0; i < 3; i++) {
        Http.Response r = Http.post(orders + "?queue=it_tx&text=otel-ear-" + UUID.randomUUID());
        assertEquals(200, r.status(), r.body());
      }
      Await.until(
          "three completions on it_tx in an OTLP export",
          Duration.ofSeconds(60),
          () -> OtlpMetrics.latest(receiver.bodies(), "pgbus.jobs.completed", "it_tx") >= 3);
    }
  }
}

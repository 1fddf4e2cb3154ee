package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** /health/ready is UP once the engine runs, and shows the listener state and mode. */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ReadinessIT {

  @Deployment(testable = false)
  static WebArchive deployment() {
    return PgbusWars.of("readiness", "pgbus.capsules=ready", "pgbus.capsule.ready.queues=it_ready");
  }

  @ArquillianResource URL url;

  @Test
  void readinessIsUpWithTheListenerDelivering() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "readiness UP with a delivering listener",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].status() == 200 && last[0].body().contains("\"delivering\"");
        });
    String body = last[0].body();
    assertTrue(body.contains("\"pgbus\""), body);
    assertTrue(body.contains("\"notify\""), body);
    assertTrue(
        body.contains("\"schemaVersion\":\"" + io.pgbus.engine.Schema.EXPECTED_VERSION + "\""),
        body);
  }
}

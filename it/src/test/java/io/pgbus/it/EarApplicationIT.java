package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.time.Duration;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An application shaped as a user builds one from the README and docs/wildfly.md ({@link Ears}): an
 * order enqueued through its REST resource runs its {@code @ApplicationScoped} handler, whose
 * {@code @Resource(lookup = "jdbc/pgbus")} write commits with the completion; and pgbus's checks
 * are in the server's readiness and liveness, once each.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class EarApplicationIT {

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    return Ears.of("orders", "pgbus.capsules=orders", "pgbus.capsule.orders.queues=it_tx");
  }

  @ArquillianResource URL url;

  @Test
  void anOrderRunsItsApplicationScopedHandlerWhoseWriteCommitsWithTheCompletion() throws Exception {
    String orders = Http.root(url) + "/orders/api/orders";
    String text = "ear-" + UUID.randomUUID();
    Http.Response enqueued = Http.post(orders + "?queue=it_tx&text=" + text);
    assertEquals(200, enqueued.status(), enqueued.body());
    long id = Long.parseLong(enqueued.body().strip());

    String[] last = {null};
    Await.until(
        "job " + id + " to complete with its handler's row",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(orders + "/" + id).body();
          return last[0].startsWith("completed");
        });
    assertEquals("completed 1", last[0]);
  }

  @Test
  void pgbusChecksAreInTheServersReadinessAndLivenessOnceEach() throws Exception {
    String health = TestServer.current().health(url);
    Http.Response[] ready = {null};
    Await.until(
        "pgbus's readiness check UP in " + health + "/ready",
        Duration.ofSeconds(60),
        () -> {
          ready[0] = Http.get(health + "/ready");
          return ready[0].body().contains("\"pgbus\"") && ready[0].status() == 200;
        });
    assertEquals(1, occurrences(ready[0].body(), "\"pgbus\""), ready[0].body());
    Http.Response live = Http.get(health + "/live");
    assertEquals(1, occurrences(live.body(), "\"pgbus-capsules\""), live.body());
  }

  static int occurrences(String text, String part) {
    return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
  }
}

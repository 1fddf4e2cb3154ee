package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The server's readiness does not lie about pgbus inside an EAR: with pgbus's datasource on an
 * unreachable database (jdbc/pgbusDown), /health/ready is DOWN (503) with pgbus's short category.
 * On WildFly this is the server-wide endpoint of the management interface.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class EarReadinessWhenDatabaseDownIT {

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    String down = TestServer.current().dataSource("jdbc/pgbusDown");
    return Ears.of(
        "orders-down",
        "pgbus.datasource=" + down,
        "pgbus.listener.datasource=" + down,
        "pgbus.capsules=orders",
        "pgbus.capsule.orders.queues=it_tx");
  }

  @ArquillianResource URL url;

  @Test
  void readinessIsDownWithPgbusCategoryWhenPgbusCannotReachItsDatabase() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "the server's readiness to report pgbus's unreachable database",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].body().contains("database unreachable");
        });
    assertEquals(503, last[0].status(), last[0].body());
    assertEquals(1, EarApplicationIT.occurrences(last[0].body(), "\"pgbus\""), last[0].body());
  }
}

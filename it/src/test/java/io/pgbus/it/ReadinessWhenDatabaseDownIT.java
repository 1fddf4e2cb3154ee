package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

/**
 * A database that cannot be reached at deploy does not fail the deployment; readiness is DOWN
 * and says why. The test server's jdbc/pgbusDown datasource points at a port nothing listens on.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ReadinessWhenDatabaseDownIT {

  @Deployment(testable = false)
  static WebArchive deployment() {
    return PgbusWars.of(
        "readiness-down",
        "pgbus.datasource=" + TestServer.current().dataSource("jdbc/pgbusDown"),
        "pgbus.listener.datasource=" + TestServer.current().dataSource("jdbc/pgbusDown"),
        "pgbus.capsules=ready",
        "pgbus.capsule.ready.queues=it_ready");
  }

  @ArquillianResource URL url;

  @Test
  void readinessIsDownWithAClearReason() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "readiness to report the unreachable database",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].body().contains("database not ready");
        });
    assertEquals(503, last[0].status(), last[0].body());
    assertTrue(last[0].body().contains("\"DOWN\""), last[0].body());
  }
}

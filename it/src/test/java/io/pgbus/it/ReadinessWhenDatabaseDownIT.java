package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * A database that cannot be reached at deploy does not fail the deployment; readiness is DOWN and
 * says why in a short category, without the driver's text (host, port, user), which goes to the
 * server log. The test server's jdbc/pgbusDown datasource points at 127.0.0.1:1, where nothing
 * listens.
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
  void readinessIsDownWithACategoryAndNoConnectionDetails() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "readiness to report the unreachable database",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].body().contains("database unreachable");
        });
    String body = last[0].body();
    assertEquals(503, last[0].status(), body);
    assertTrue(body.contains("\"DOWN\""), body);
    for (String detail :
        new String[] {"127.0.0.1", "localhost", "refused", "postgres", "Exception", "SQL"}) {
      assertFalse(body.contains(detail), "readiness shows '" + detail + "': " + body);
    }
  }
}

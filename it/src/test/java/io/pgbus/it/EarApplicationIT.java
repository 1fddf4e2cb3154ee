package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Config;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import java.io.File;
import java.net.URL;
import java.util.Arrays;
import java.time.Duration;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An application shaped as a user builds one from the README and docs/wildfly.md: an EAR whose WAR
 * carries pgbus-api and pgbus-impl in WEB-INF/lib, the handlers and microprofile-config.properties, and whose
 * META-INF/jboss-deployment-structure.xml gives the WAR the driver module, and whose web.xml binds
 * {@code jdbc/pgbus} for WildFly; pgbus-health sits in the EAR's lib/, where WildFly finds its
 * checks. The same EAR deploys to both servers.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class EarApplicationIT {

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    WebArchive war =
        ShrinkWrap.create(WebArchive.class, "orders.war")
            .addAsLibraries(libraries(false))
            .addClasses(Marker.class, Enqueuer.class, RecordingHandler.class, ItSchema.class,
                OrdersResource.class, ItRestApplication.class, Sql.class, TestServer.class)
            // One WAR for both servers: Liberty does not use this web.xml's references.
            .setWebXML("wildfly/web.xml");
    Config.with(
        war,
        TestServer.current()
            .pgbusConfig("pgbus.capsules=orders", "pgbus.capsule.orders.queues=it_tx"));
    return ShrinkWrap.create(EnterpriseArchive.class, "orders.ear")
        .addAsModule(war)
        .addAsLibraries(libraries(true))
        .addAsManifestResource("ear/jboss-deployment-structure.xml", "jboss-deployment-structure.xml");
  }

  @ArquillianResource URL url;

  /**
   * pgbus's jars for the WAR, or the one for the EAR's lib/: pgbus-health, whose checks WildFly
   * finds only there (WFLY-12835, docs/wildfly.md).
   */
  private static File[] libraries(boolean earLib) {
    return Arrays.stream(Deployments.pgbusLibraries())
        .filter(f -> f.getName().startsWith("pgbus-health") == earLib)
        .toArray(File[]::new);
  }

  @Test
  void anOrderRunsItsApplicationScopedHandlerWhoseWriteCommitsWithTheCompletion()
      throws Exception {
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
  void pgbusChecksAreInTheServersReadinessAndLiveness() throws Exception {
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

  private static int occurrences(String text, String part) {
    return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
  }
}

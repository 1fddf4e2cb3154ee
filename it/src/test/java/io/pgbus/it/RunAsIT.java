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
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A handler has no caller of its own (docs/operations.md, "Which identity a handler runs as"); an
 * EJB annotated {@code @RunAs("pgbus-admin")} gives its calls one, and the server's run-as mapping
 * names the user: a job enqueued through it records that user, admin, not the database role. The
 * mapping is each server's own file in the same EAR; the other server ignores it.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class RunAsIT {

  /**
   * Liberty: the run-as role's user, in the EAR's bindings (a WAR alone can bind only in
   * server.xml).
   */
  private static final String LIBERTY_BINDINGS =
      """
      <application-bnd xmlns="http://websphere.ibm.com/xml/ns/javaee"
          xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xsi:schemaLocation="http://websphere.ibm.com/xml/ns/javaee http://websphere.ibm.com/xml/ns/javaee/ibm-application-bnd_1_2.xsd"
          version="1.2">
        <security-role name="pgbus-admin">
          <group name="pgbus-admin"/>
          <run-as userid="admin" password="admin-secret"/>
        </security-role>
      </application-bnd>
      """;

  /**
   * WildFly: the run-as principal of the bean, in the module's jboss-ejb3.xml. Only this bean in
   * the security domain: WildFly denies every method without a permission annotation in an EJB that
   * is (WFLYEJB0364), pgbus's own EJBs and the test's Enqueuer included.
   */
  private static final String WILDFLY_EJB3 =
      """
      <jboss:ejb-jar xmlns:jboss="urn:jboss:jakartaee:1.0"
          xmlns="https://jakarta.ee/xml/ns/jakartaee"
          xmlns:s="urn:security:1.1"
          version="4.0" impl-version="2.0">
        <assembly-descriptor>
          <s:security>
            <ejb-name>ItRunAsBean</ejb-name>
            <s:security-domain>other</s:security-domain>
            <s:run-as-principal>admin</s:run-as-principal>
          </s:security>
        </assembly-descriptor>
      </jboss:ejb-jar>
      """;

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    EnterpriseArchive ear =
        Ears.of(
            "run-as",
            new Class<?>[] {RunAsHandler.class, ItRunAsBean.class, ItEnqueuingBean.class},
            "pgbus.capsules=runas",
            "pgbus.capsule.runas.queues=it_runas",
            "pgbus.capsule.runas.concurrency=1");
    ear.getAsType(WebArchive.class, "run-as.war")
        .addAsWebInfResource(new StringAsset(WILDFLY_EJB3), "jboss-ejb3.xml");
    return ear.addAsManifestResource(new StringAsset(LIBERTY_BINDINGS), "ibm-application-bnd.xml");
  }

  @ArquillianResource URL url;

  @Test
  void aJobEnqueuedThroughARunAsBeanRecordsTheMappedUser() throws Exception {
    // pgbus migrates a fresh test database at start; an enqueue before that waits for it.
    String health = TestServer.current().health(url) + "/ready";
    Await.until(
        "pgbus ready in " + health,
        Duration.ofSeconds(60),
        () -> {
          Http.Response ready = Http.get(health);
          return ready.status() == 200 && ready.body().contains("\"pgbus\"");
        });
    String orders = Http.root(url) + "/run-as/api/orders";
    Http.Response enqueued = Http.post(orders + "?queue=it_runas&text=" + UUID.randomUUID());
    assertEquals(200, enqueued.status(), enqueued.body());
    long id = Long.parseLong(enqueued.body().strip());

    String[] handled = {""};
    Await.until(
        "job " + id + "'s handler to enqueue through the run-as bean",
        Duration.ofSeconds(60),
        () -> {
          handled[0] = Http.get(orders + "/" + id + "/handled").body().strip();
          return !handled[0].isEmpty();
        });
    assertEquals("admin", handled[0], "enqueued_by of the job the run-as bean enqueued");
  }
}

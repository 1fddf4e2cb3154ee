package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 *
 * <p>A queue may instead run its handler as the user who enqueued the job ({@code
 * pgbus.queue.it_runas_roles.run-as=enqueuer}, docs/configuration.md, "Running a handler as the
 * enqueuer"): its handler calls an EJB only pgbus-admin may call, which passes for admin's job and
 * names admin as its caller, and fails the job for viewer's; a user the registry does not have, and
 * an enqueue without a caller, fail closed.
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
        <security-role name="pgbus-viewer">
          <group name="pgbus-viewer"/>
        </security-role>
      </application-bnd>
      """;

  /**
   * WildFly: the run-as principal of the bean, in the module's jboss-ejb3.xml, and ItRolesBean in
   * the security domain, where a handler's run-as identity is. Only these beans in the domain:
   * WildFly denies every method without a permission annotation in an EJB that is (WFLYEJB0364),
   * pgbus's own EJBs and the test's Enqueuer included.
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
          <s:security>
            <ejb-name>ItRolesBean</ejb-name>
            <s:security-domain>other</s:security-domain>
          </s:security>
        </assembly-descriptor>
      </jboss:ejb-jar>
      """;

  @Deployment(testable = false)
  static EnterpriseArchive deployment() {
    EnterpriseArchive ear =
        Ears.of(
            "run-as",
            new Class<?>[] {
              RunAsHandler.class,
              ItRunAsBean.class,
              ItEnqueuingBean.class,
              RunAsRolesHandler.class,
              HandledRows.class,
              ItRolesBean.class,
              RunAsResource.class
            },
            "pgbus.capsules=runas",
            "pgbus.capsule.runas.queues=it_runas,it_runas_roles",
            "pgbus.capsule.runas.concurrency=1",
            "pgbus.queue.it_runas_roles.run-as=enqueuer");
    // BASIC login for the enqueuers; on WildFly also the security domain other (jboss-web.xml),
    // which the handlers' run-as identities come from.
    WebArchive war = ear.getAsType(WebArchive.class, "run-as.war");
    TestServer.current().withBasicAuth(war);
    war.addAsWebInfResource(new StringAsset(WILDFLY_EJB3), "jboss-ejb3.xml");
    return ear.addAsManifestResource(new StringAsset(LIBERTY_BINDINGS), "ibm-application-bnd.xml");
  }

  @ArquillianResource URL url;

  /** pgbus migrates a fresh test database at start; an enqueue before that waits for it. */
  private void awaitReady() throws Exception {
    String health = TestServer.current().health(url) + "/ready";
    Await.until(
        "pgbus ready in " + health,
        Duration.ofSeconds(60),
        () -> {
          Http.Response ready = Http.get(health);
          return ready.status() == 200 && ready.body().contains("\"pgbus\"");
        });
  }

  @Test
  void aJobEnqueuedThroughARunAsBeanRecordsTheMappedUser() throws Exception {
    awaitReady();
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

  @Test
  void anAdminsJobRunsAsAdminThroughTheRoleCheckAndNamesAdminAsTheCaller() throws Exception {
    awaitReady();
    long id = enqueueAs("admin", "admin-secret");
    String[] handled = {""};
    Await.until(
        "job " + id + "'s handler to call the pgbus-admin EJB",
        Duration.ofSeconds(60),
        () -> {
          handled[0] = Http.get(Http.root(url) + "/run-as/api/orders/" + id + "/handled").body();
          return !handled[0].isBlank();
        });
    assertEquals("admin", handled[0].strip(), "getCallerPrincipal() in the EJB the handler called");
    assertTrue(job(id).startsWith("completed admin"), job(id));
  }

  @Test
  void aViewersJobFailsOnTheRoleTheHandlerNeeds() throws Exception {
    awaitReady();
    long id = enqueueAs("viewer", "viewer-secret");
    String state = awaitEnd(id);
    // Dead at once, with 24 of its 25 attempts left: the role refusal would repeat on every retry.
    assertTrue(state.startsWith("dead viewer "), state);
    assertTrue(state.contains("run-as identity unavailable: job " + id), state);
    assertTrue(state.contains("user 'viewer' lacks a role the handler needs"), state);
    assertFalse(state.contains("\"attempt\": 2"), state);
    assertTrue(
        Http.get(Http.root(url) + "/run-as/api/orders/" + id + "/handled").body().isBlank(),
        "the handler wrote nothing");
  }

  @Test
  void aUserTheRegistryDoesNotHaveFailsClosedAtOnce() throws Exception {
    awaitReady();
    Http.Response r =
        Http.post(
            Http.root(url) + "/run-as/api/runas/sql?text=ghost&user=no-such-user",
            "Authorization",
            basic("admin", "admin-secret"));
    assertEquals(200, r.status(), r.body());
    long id = Long.parseLong(r.body().strip());
    String state = awaitEnd(id);
    assertTrue(state.startsWith("dead no-such-user "), state);
    assertTrue(state.contains("run-as identity unavailable: job " + id), state);
    assertTrue(state.contains("'no-such-user'"), state);
  }

  @Test
  void anEnqueueWithoutACallerIsRefusedNamingTheQueue() throws Exception {
    awaitReady();
    Http.Response r = Http.post(Http.root(url) + "/run-as/api/runas/anonymous?text=nobody");
    assertEquals(200, r.status(), r.body());
    assertTrue(
        r.body().startsWith("refused: queue 'it_runas_roles' runs its handler as"), r.body());
    assertTrue(r.body().contains("pgbus.queue.it_runas_roles.run-as=container"), r.body());
  }

  private long enqueueAs(String user, String password) throws Exception {
    Http.Response r =
        Http.post(
            Http.root(url) + "/run-as/api/runas/enqueue?text=" + UUID.randomUUID(),
            "Authorization",
            basic(user, password));
    assertEquals(200, r.status(), r.body());
    return Long.parseLong(r.body().strip());
  }

  /** "state run_as errors" once the job is completed or dead. */
  private String awaitEnd(long id) throws Exception {
    String[] state = {""};
    Await.until(
        "job " + id + " to end",
        Duration.ofSeconds(60),
        () -> {
          state[0] = job(id);
          return state[0].startsWith("dead") || state[0].startsWith("completed");
        });
    return state[0];
  }

  private String job(long id) throws Exception {
    return Http.get(Http.root(url) + "/run-as/api/runas/" + id).body().strip();
  }

  private static String basic(String user, String password) {
    return "Basic "
        + java.util.Base64.getEncoder()
            .encodeToString(
                (user + ":" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import java.io.StringReader;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.Keys;

/**
 * A workflow in the console's graph (#/workflows/<id>), in a real headless Chromium: an EJB
 * enqueues a workflow ({@link WorkflowStarter}) whose failure branch runs, whose result branch is
 * taken one way and not the other, and whose slow node runs when an admin cancels the whole
 * workflow from the page. The graph draws a box per job with its state in words, greys the branch
 * not taken and shows the cancel; no node ran twice. Screenshots go to
 * target/console-screenshots/<server>.
 */
@ExtendWith(ArquillianExtension.class)
class WorkflowIT {

  @Deployment(testable = false)
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "workflow",
                "pgbus.capsules=wf",
                "pgbus.capsule.wf.queues=it_wf,it_wf_fail,it_wf_slow",
                "pgbus.capsule.wf.concurrency=3",
                "pgbus.console.refresh=1s")
            .addClasses(
                ItRestApplication.class,
                ItAdmin.class,
                WorkflowStep.class,
                WorkflowRuns.class,
                WorkflowResultHandler.class,
                WorkflowFailingHandler.class,
                WorkflowSlowHandler.class,
                WorkflowStarter.class,
                WorkflowResource.class)
            .addAsLibrary(ConsoleBrowserIT.consoleJar());
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @ArquillianResource URL url;

  private String base() {
    return Http.root(url) + url.getPath();
  }

  private String console(String user, String password) {
    return Http.root(url).replace("://", "://" + user + ":" + password + "@")
        + url.getPath()
        + "pgbus/";
  }

  /** The engine migrates the schema after the deployment: wait until the API can read it. */
  @BeforeEach
  void awaitTheAdminApi() throws Exception {
    Await.until("the admin API answers 200", Duration.ofSeconds(90), () -> answers(api("queues")));
    // A database left at an older schema by another run answers queues before the start-up
    // migration reached the workflow tables (WildFly): wait until a workflow read is no error.
    Await.until(
        "the schema has workflows",
        Duration.ofSeconds(90),
        () -> {
          int s = Http.get(api("workflows/1"), "admin", "admin-secret").status();
          return s == 200 || s == 404;
        });
  }

  /** Whether the URL answers 200 to an admin; a request that timed out (a busy machine) is a no. */
  private static boolean answers(String url) throws Exception {
    try {
      return Http.get(url, "admin", "admin-secret").status() == 200;
    } catch (java.net.http.HttpTimeoutException e) {
      return false;
    }
  }

  @Test
  void aCancelledWorkflowWithAFailureBranchAndAResultBranchIsDrawnWithEachNodesState()
      throws Exception {
    JsonObject ids = start("order-" + UUID.randomUUID().toString().substring(0, 8));
    String workflow = id(ids, "workflow");
    // The failure branch ran, one result branch was taken and the other not, and the slow node
    // under the taken one runs.
    awaitState(ids, "compensate", "completed");
    awaitState(ids, "approved", "completed");
    awaitState(ids, "ship", "running");
    assertEquals("dead", state(id(ids, "pay")));
    assertEquals("cancelled", state(id(ids, "rejected")), "a branch not taken ends cancelled");
    assertEquals("cancelled", state(id(ids, "receipt")), "its parent died");

    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/workflows/" + workflow);
      b.find("body[data-page=workflows] #wf-svg");
      b.await(20, d -> b.count("#wf-svg a.node") == 8);
      b.find("#wf-state[data-state=running]");
      for (var node :
          Map.of(
                  "charge", "completed",
                  "approved", "completed",
                  "rejected", "cancelled",
                  "ship", "running",
                  "notify", "scheduled",
                  "pay", "dead",
                  "compensate", "completed",
                  "receipt", "cancelled")
              .entrySet()) {
        assertEquals(node.getValue(), nodeState(b, id(ids, node.getKey())), node.getKey());
      }
      // The result edges: the taken one labelled with its predicate, the other greyed.
      String taken = edge(ids, "charge", "approved");
      String notTaken = edge(ids, "charge", "rejected");
      assertEquals("completed", b.find(taken).getAttribute("data-state"));
      // PostgreSQL's normalised jsonpath text: ($."approved" == true).
      String predicate = b.find(taken + " .edge-label").getText();
      assertTrue(predicate.contains("approved") && predicate.contains("== true"), predicate);
      assertEquals("not_taken", b.find(notTaken).getAttribute("data-state"));
      assertTrue(b.find(notTaken).getAttribute("class").contains("not-taken"));
      assertEquals("rgb(208, 213, 221)", stroke(b, notTaken), "greyed");
      assertTrue(!stroke(b, taken).equals(stroke(b, notTaken)));
      // The failure edge: dashed, and said in words.
      String failure = edge(ids, "pay", "compensate");
      assertEquals("failure", b.find(failure).getAttribute("data-kind"));
      assertEquals("on failure", b.find(failure + " .edge-label").getText());
      assertTrue(
          !"none"
              .equals(
                  b.script(
                      "return getComputedStyle(document.querySelector(arguments[0] + ' path'))"
                          + ".strokeDasharray;",
                      failure)),
          "dashed");
      // The layers: each node right of its parents.
      assertTrue(x(b, id(ids, "charge")) < x(b, id(ids, "approved")));
      assertTrue(x(b, id(ids, "approved")) < x(b, id(ids, "ship")));
      assertTrue(x(b, id(ids, "ship")) < x(b, id(ids, "notify")));
      b.screenshot("workflow-running");

      // A node is a link: the keyboard opens its job, whose page links back to the workflow.
      b.find("#wf-svg a.node[data-job-id='" + id(ids, "pay") + "']").sendKeys(Keys.ENTER);
      b.find("body[data-page=job] #job-state[data-state=dead]");
      b.click("#job-workflow");
      b.find("body[data-page=workflows] #wf-svg a.node");

      // Cancel the workflow from the page, after the confirmation, while ship runs.
      b.click("button[data-action=workflow-cancel]");
      assertTrue(
          b.find("#confirm-text").getText().contains("Cancel workflow " + workflow),
          b.find("#confirm-text").getText());
      b.click("#confirm-cancel");
      assertEquals("running", state(id(ids, "ship")), "the dialog's Cancel changes nothing");
      b.click("button[data-action=workflow-cancel]");
      b.click("#confirm-ok");
      b.find("#wf-state[data-state=cancelled]");
      b.await(20, d -> "cancelled".equals(nodeState(b, id(ids, "ship"))));
      assertEquals("cancelled", nodeState(b, id(ids, "notify")));
      assertEquals("completed", nodeState(b, id(ids, "compensate")), "finished nodes stay");
      assertEquals(0, b.count("button[data-action=workflow-cancel]"), "nothing left to cancel");
      b.screenshot("workflow-cancelled");
      assertEquals("", severe(b), "no errors in the page's console");
    }

    JsonObject w = json(Http.get(api("workflows/" + workflow), "viewer", "viewer-secret").body());
    assertEquals("cancelled", w.getString("state"));
    assertEquals("cancelled", state(id(ids, "ship")));
    // No node ran twice: the handlers' count in the server, and each job's attempts.
    JsonObject runs = json(Http.get(base() + "api/workflow-it/runs").body());
    for (String node : List.of("charge", "approved", "ship", "pay", "compensate")) {
      String job = id(ids, node);
      assertEquals(1, runs.getInt(job, 0), node + " ran once: " + runs);
      assertEquals(1, job(job).getInt("attempt"), node);
    }
    for (String node : List.of("rejected", "notify", "receipt")) {
      assertEquals(0, runs.getInt(id(ids, node), 0), node + " never ran: " + runs);
    }
  }

  @Test
  void aViewerSeesTheGraphWithoutActions() throws Exception {
    JsonObject ids = start("viewed-" + UUID.randomUUID().toString().substring(0, 8));
    awaitState(ids, "pay", "dead");
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret") + "#/workflows/" + id(ids, "workflow"));
      b.await(20, d -> b.count("#wf-svg a.node") == 8);
      assertEquals(0, b.count("button.act"), "no Cancel or Retry for a viewer");
      b.screenshot("workflow-viewer");
      // Cancelled by the API, the open page follows on its refresh.
      String token = json(Http.get(api("csrf"), "admin", "admin-secret").body()).getString("token");
      Http.Response cancel =
          Http.request(
              "POST",
              api("workflows/" + id(ids, "workflow") + "/cancel"),
              "admin",
              "admin-secret",
              "X-Pgbus-CSRF",
              token,
              "Cookie",
              "pgbus-csrf=" + token);
      assertEquals(200, cancel.status(), cancel.body());
      b.find("#wf-state[data-state=cancelled]");
      assertEquals("", severe(b));
    }
  }

  @Test
  void anUnknownWorkflowSaysSoAndTheLayoutKeepsEachNodeRightOfItsParents() throws Exception {
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret") + "#/workflows/987654321");
      assertTrue(b.find("#wf-gone").getText().contains("No such workflow"));
      // The browser logs the 404 it was answered; nothing else may follow.
      assertTrue(severe(b).contains("404"));
      // The layout alone, on a fixture: a diamond under a chain, an edge to a node past the
      // answer's 1,000 (dropped), and a cycle (refused at enqueue; drawn, not looped on).
      @SuppressWarnings("unchecked")
      Map<String, Object> g =
          (Map<String, Object>)
              b.asyncScript(
                  "const done = arguments[arguments.length - 1];"
                      + "import(location.origin + location.pathname + 'wfgraph.js').then(m => {"
                      + " const n = (job) => ({job, node: 'n' + job, queue: 'q', state: 'scheduled'});"
                      + " const e = (from, to) => ({from, to, kind: 'success', predicate: null,"
                      + "   state: 'waiting', onFailure: 'cancel'});"
                      + " const l = m.layout(['1','2','3','4','5','6','7','8'].map(n),"
                      + "   [e('1','2'), e('2','3'), e('1','4'), e('3','5'), e('4','5'),"
                      + "    e('5','999'), e('7','8'), e('8','7')]);"
                      + " done({layers: Object.fromEntries(l.nodes.map(x => [x.job, x.layer])),"
                      + "   edges: l.edges.length});"
                      + "}).catch(err => done({error: String(err)}));");
      assertTrue(g.get("layers") instanceof Map, String.valueOf(g));
      Map<?, ?> layers = (Map<?, ?>) g.get("layers");
      // The longest path: 5 waits for 3 (layer 2), so it sits on layer 3, not 2.
      assertEquals(
          Map.of("1", 0L, "2", 1L, "3", 2L, "4", 1L, "5", 3L, "6", 0L, "7", 4L, "8", 4L),
          Map.copyOf(layers));
      assertEquals(7L, g.get("edges"), "the edge to a node not in the answer is left out");
      assertEquals("", severe(b));
    }
  }

  // ---------------------------------------------------------------------------------------------

  private String api(String path) {
    return base() + "api/pgbus/admin/" + path;
  }

  /** Enqueues the workflow through the application's EJB: {"workflow":5,"charge":41,...}. */
  private JsonObject start(String name) throws Exception {
    Http.Response r = Http.post(base() + "api/workflow-it?name=" + name);
    assertEquals(200, r.status(), r.body());
    return json(r.body());
  }

  private static String id(JsonObject ids, String node) {
    return ids.getJsonNumber(node).toString();
  }

  private JsonObject job(String id) throws Exception {
    Http.Response r = Http.get(api("jobs/" + id), "admin", "admin-secret");
    assertEquals(200, r.status(), r.body());
    return json(r.body());
  }

  private String state(String id) throws Exception {
    return job(id).getString("state");
  }

  private void awaitState(JsonObject ids, String node, String state) throws Exception {
    Await.until(
        node + " " + state, Duration.ofSeconds(60), () -> state.equals(state(id(ids, node))));
  }

  private static String nodeState(Browser b, String job) {
    return b.find("#wf-svg a.node[data-job-id='" + job + "'] .node-state").getText().toLowerCase();
  }

  private static String edge(JsonObject ids, String from, String to) {
    return "#wf-svg g.edge[data-from='" + id(ids, from) + "'][data-to='" + id(ids, to) + "']";
  }

  private static String stroke(Browser b, String css) {
    return (String)
        b.script(
            "return getComputedStyle(document.querySelector(arguments[0] + ' path')).stroke;", css);
  }

  private static double x(Browser b, String job) {
    return Double.parseDouble(
        b.find("#wf-svg a.node[data-job-id='" + job + "'] rect").getAttribute("x"));
  }

  /** The page's console errors (a missing file, a script error), if any. */
  private static String severe(Browser b) {
    StringBuilder s = new StringBuilder();
    for (String line : b.log().split("\n")) {
      if (line.startsWith("SEVERE")) {
        s.append(line).append('\n');
      }
    }
    return s.toString();
  }

  private static JsonObject json(String body) {
    try (JsonReader r = Json.createReader(new StringReader(body))) {
      return r.readObject();
    }
  }
}

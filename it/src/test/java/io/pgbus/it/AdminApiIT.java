package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Http;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import jakarta.annotation.Resource;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The REST admin API (an application's subclass of AdminResource) on the test server: search pages
 * with a keyset, every action changes pgbus.job, the roles and the CSRF token are enforced, and bad
 * input is a 400 that names the field. Jobs are planted with SQL in queues no capsule reads, so
 * nothing runs them.
 */
@ExtendWith(ArquillianExtension.class)
class AdminApiIT {

  @Deployment
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "admin-api",
                "pgbus.capsules=admin",
                "pgbus.capsule.admin.queues=it_admin_read",
                "pgbus.capsule.admin.concurrency=1")
            .addClasses(ItRestApplication.class, ItAdmin.class, Http.class);
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  private String api() {
    return Http.root(url) + url.getPath() + "api/pgbus/admin/";
  }

  private String queue() {
    return "it_admin_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  private long plant(String queue, String state, String payload) throws Exception {
    return ((Number)
            Sql.value(
                ds,
                """
                INSERT INTO pgbus.job (queue, state, payload, attempt, max_attempts, run_at,
                                       finalized_at)
                VALUES (?, ?::pgbus.job_state, ?::jsonb, 1, 1,
                        CASE WHEN ? = 'scheduled' THEN now() + interval '1 hour' ELSE now() END,
                        CASE WHEN ? IN ('completed', 'dead', 'cancelled') THEN now() END)
                RETURNING id
                """,
                queue,
                state,
                payload,
                state,
                state))
        .longValue();
  }

  private String state(long id) throws Exception {
    return (String) Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }

  private Http.Response get(String path, String user, String password) throws Exception {
    return Http.request("GET", api() + path, user, password);
  }

  /** An action as the console makes it: with the CSRF cookie and the header that repeats it. */
  private Http.Response act(String path, String user, String password) throws Exception {
    Http.Response csrf = get("csrf", user, password);
    assertEquals(200, csrf.status(), csrf.body());
    String token = csrf.cookie("pgbus-csrf");
    assertNotNull(token, csrf.headers().map().toString());
    assertTrue(csrf.body().contains(token), csrf.body());
    return Http.request(
        "POST",
        api() + path,
        user,
        password,
        "X-Pgbus-CSRF",
        token,
        "Cookie",
        "pgbus-csrf=" + token);
  }

  private static List<String> ids(String body) {
    var ids = new ArrayList<String>();
    Matcher m = Pattern.compile("\"id\":\"(\\d+)\"").matcher(body);
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }

  private static String next(String body) {
    Matcher m = Pattern.compile("\"next\":\"(\\d+)\"").matcher(body);
    return m.find() ? m.group(1) : null;
  }

  @Test
  void searchPagesThroughAQueueNewestFirstWithTheNextCursor() throws Exception {
    String q = queue();
    var planted = new ArrayList<String>();
    for (int i = 0; i < 7; i++) {
      planted.add(0, String.valueOf(plant(q, "dead", "{\"n\":" + i + "}")));
    }
    var seen = new ArrayList<String>();
    String cursor = null;
    int pages = 0;
    do {
      Http.Response r =
          get(
              "jobs?queue="
                  + q
                  + "&state=dead&limit=3"
                  + (cursor == null ? "" : "&before=" + cursor),
              "viewer",
              "viewer-secret");
      assertEquals(200, r.status(), r.body());
      seen.addAll(ids(r.body()));
      cursor = next(r.body());
      pages++;
    } while (cursor != null);
    assertEquals(3, pages);
    assertEquals(planted, seen);
  }

  @Test
  void aSearchByPayloadFindsTheDeadJobAndTheViewerSeesItsPayloadMasked() throws Exception {
    String q = queue();
    String marker = UUID.randomUUID().toString();
    long dead = plant(q, "dead", "{\"order\":\"" + marker + "\"}");
    plant(q, "dead", "{\"order\":\"other\"}");
    String filter = URLEncoder.encode("{\"order\":\"" + marker + "\"}", StandardCharsets.UTF_8);
    Http.Response r = get("jobs?state=dead&payload=" + filter, "viewer", "viewer-secret");
    assertEquals(200, r.status(), r.body());
    assertEquals(List.of(String.valueOf(dead)), ids(r.body()));

    Http.Response asViewer = get("jobs/" + dead, "viewer", "viewer-secret");
    assertEquals(200, asViewer.status(), asViewer.body());
    assertFalse(asViewer.body().contains(marker), asViewer.body());
    assertTrue(asViewer.body().contains("\"payloadMasked\":true"), asViewer.body());
    Http.Response asAdmin = get("jobs/" + dead, "admin", "admin-secret");
    assertTrue(asAdmin.body().contains(marker), asAdmin.body());
  }

  @Test
  void aJobsProgressShowsInItsViewAndInTheSearch() throws Exception {
    String q = queue();
    long job = plant(q, "completed", "{}");
    Sql.execute(
        ds,
        "UPDATE pgbus.job SET progress = jsonb_build_object('percent', 40, 'message', 'rows 4000',"
            + " 'at', now(), 'attempt', 1) WHERE id = ?",
        job);
    Http.Response one = get("jobs/" + job, "viewer", "viewer-secret");
    assertEquals(200, one.status(), one.body());
    assertTrue(
        one.body().contains("\"progress\":\"{") && one.body().contains("percent"), one.body());
    assertTrue(one.body().contains("rows 4000"), one.body());
    Http.Response search = get("jobs?queue=" + q, "viewer", "viewer-secret");
    assertTrue(search.body().contains("rows 4000"), search.body());
  }

  @Test
  void aCompletedJobShowsItsResultToAdminsAndMaskedToViewers() throws Exception {
    String marker = UUID.randomUUID().toString();
    long done = plant(queue(), "completed", "{}");
    Sql.execute(
        ds,
        "UPDATE pgbus.job SET result = ?::jsonb WHERE id = ?",
        "{\"receipt\":\"" + marker + "\"}",
        done);

    Http.Response asViewer = get("jobs/" + done, "viewer", "viewer-secret");
    assertEquals(200, asViewer.status(), asViewer.body());
    assertFalse(asViewer.body().contains(marker), asViewer.body());
    Http.Response asAdmin = get("jobs/" + done, "admin", "admin-secret");
    assertTrue(asAdmin.body().contains(marker), asAdmin.body());
  }

  @Test
  void everyActionChangesTheJobInPgbusJob() throws Exception {
    String q = queue();
    long dead = plant(q, "dead", "{}");
    long scheduled = plant(q, "scheduled", "{}");
    long waiting = plant(q, "available", "{}");
    long done = plant(q, "completed", "{}");

    Http.Response replay = act("jobs/" + dead + "/replay", "admin", "admin-secret");
    assertEquals(200, replay.status(), replay.body());
    assertTrue(replay.body().contains("\"changed\":1"), replay.body());
    assertEquals("available", state(dead));

    assertEquals(200, act("jobs/" + scheduled + "/retry", "admin", "admin-secret").status());
    assertEquals("available", state(scheduled));
    assertEquals(
        0,
        Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ? AND run_at > now()", scheduled));

    Http.Response cancel = act("jobs/cancel?queue=" + q, "admin", "admin-secret");
    assertEquals(200, cancel.status(), cancel.body());
    assertTrue(cancel.body().contains("\"changed\":3"), cancel.body());
    assertEquals("cancelled", state(waiting));
    assertEquals("cancelled", state(dead));

    Http.Response delete =
        act("jobs/delete?queue=" + q + "&state=completed", "admin", "admin-secret");
    assertTrue(delete.body().contains("\"changed\":1"), delete.body());
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE id = ?", done));
    assertEquals(
        "admin",
        Sql.value(
            ds, "SELECT actor FROM pgbus.audit WHERE job_id = ? AND action = 'delete'", done));
  }

  @Test
  void anAdminPausesAndResumesAQueueAndAViewerMayNot() throws Exception {
    String q = queue();
    Http.Response paused = act("queues/" + q + "/pause", "admin", "admin-secret");
    assertEquals(200, paused.status(), paused.body());
    assertTrue(paused.body().contains("\"paused\":true"), paused.body());
    assertEquals(1L, Sql.value(ds, "SELECT count(*) FROM pgbus.queue_pause WHERE queue = ?", q));
    Http.Response listed = get("queues", "viewer", "viewer-secret");
    assertTrue(listed.body().contains("\"queue\":\"" + q + "\""), listed.body());

    assertEquals(403, act("queues/" + q + "/resume", "viewer", "viewer-secret").status());
    assertEquals(1L, Sql.value(ds, "SELECT count(*) FROM pgbus.queue_pause WHERE queue = ?", q));

    Http.Response resumed = act("queues/" + q + "/resume", "admin", "admin-secret");
    assertEquals(200, resumed.status(), resumed.body());
    assertTrue(resumed.body().contains("\"paused\":false"), resumed.body());
    assertEquals(0L, Sql.value(ds, "SELECT count(*) FROM pgbus.queue_pause WHERE queue = ?", q));

    Http.Response badQueue = act("queues/Not-A-Queue/pause", "admin", "admin-secret");
    assertEquals(400, badQueue.status(), badQueue.body());
    assertTrue(badQueue.body().contains("\"field\":\"queue\""), badQueue.body());
    Http.Response badAction = act("queues/" + q + "/stop", "admin", "admin-secret");
    assertEquals(400, badAction.status(), badAction.body());
    assertTrue(badAction.body().contains("\"field\":\"action\""), badAction.body());
    assertEquals(
        403,
        Http.request("POST", api() + "queues/" + q + "/pause", "admin", "admin-secret").status(),
        "no CSRF token");
  }

  @Test
  void anAnonymousCallerGets401() throws Exception {
    assertEquals(401, get("jobs", null, null).status());
    assertEquals(401, get("queues", null, null).status());
    assertEquals(401, Http.request("POST", api() + "jobs/1/replay", null, null).status());
  }

  @Test
  void aViewerReadsButGets403ForAnAction() throws Exception {
    long dead = plant(queue(), "dead", "{}");
    assertEquals(200, get("queues", "viewer", "viewer-secret").status());
    Http.Response r = act("jobs/" + dead + "/replay", "viewer", "viewer-secret");
    assertEquals(403, r.status(), r.body());
    assertEquals("dead", state(dead));
    assertEquals(403, get("jobs", "someone", "someone-secret").status());
  }

  @Test
  void anActionWithoutTheCsrfTokenIsRefused() throws Exception {
    long dead = plant(queue(), "dead", "{}");
    Http.Response none =
        Http.request("POST", api() + "jobs/" + dead + "/replay", "admin", "admin-secret");
    assertEquals(403, none.status(), none.body());
    assertTrue(none.body().contains("csrf"), none.body());
    Http.Response mismatch =
        Http.request(
            "POST",
            api() + "jobs/" + dead + "/replay",
            "admin",
            "admin-secret",
            "X-Pgbus-CSRF",
            "forged",
            "Cookie",
            "pgbus-csrf=other");
    assertEquals(403, mismatch.status(), mismatch.body());
    assertEquals("dead", state(dead));
  }

  @Test
  void badInputGets400NamingTheField() throws Exception {
    assertField(get("jobs?state=deadish", "viewer", "viewer-secret"), "state");
    assertField(get("jobs/abc", "viewer", "viewer-secret"), "id");
    assertField(
        get(
            "jobs?payload=" + URLEncoder.encode("{nope", StandardCharsets.UTF_8),
            "viewer",
            "viewer-secret"),
        "payload");
    assertField(
        get("jobs?payload=%7B" + "x".repeat(1200) + "%7D", "viewer", "viewer-secret"), "payload");
    assertField(get("jobs?queue=" + "q".repeat(60), "viewer", "viewer-secret"), "queue");
    assertField(get("jobs?limit=5000", "viewer", "viewer-secret"), "limit");
    assertField(act("jobs/explode?queue=x", "admin", "admin-secret"), "action");
  }

  private static void assertField(Http.Response r, String field) {
    assertEquals(400, r.status(), r.body());
    assertTrue(r.body().contains("\"field\":\"" + field + "\""), r.body());
  }

  @Test
  void queuesThroughputCronsFleetAndDoctorAnswerAViewer() throws Exception {
    String q = queue();
    plant(q, "completed", "{}");
    plant(q, "available", "{}");
    Http.Response queues = get("queues", "viewer", "viewer-secret");
    assertEquals(200, queues.status(), queues.body());
    assertTrue(queues.body().contains("\"queue\":\"" + q + "\""), queues.body());
    assertTrue(queues.body().contains("\"capsule\":\"admin\""), queues.body());
    Http.Response throughput = get("throughput", "viewer", "viewer-secret");
    assertTrue(throughput.body().contains("\"queue\":\"" + q + "\""), throughput.body());
    assertEquals(200, get("crons", "viewer", "viewer-secret").status());
    Http.Response fleet = get("fleet", "viewer", "viewer-secret");
    assertEquals(200, fleet.status(), fleet.body());
    assertTrue(fleet.body().contains("\"listeners\""), fleet.body());
    // pgbus.node: this JVM's row, live through its listener backend.
    assertTrue(fleet.body().contains("\"nodes\":[{"), fleet.body());
    assertTrue(fleet.body().contains("\"connected\":true"), fleet.body());
    // Its heartbeat: younger than its TTL, or its listener open, so alive (issue #14).
    assertTrue(fleet.body().contains("\"alive\":true"), fleet.body());
    assertTrue(fleet.body().contains("\"heartbeatTtl\":\""), fleet.body());
    assertEquals(200, get("doctor", "viewer", "viewer-secret").status());
  }
}

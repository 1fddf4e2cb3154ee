package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Http;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The REST admin API (an application's subclass of AdminResource) on the test server: search pages
 * with a keyset, every action changes pgbus.job, the roles and the CSRF token are enforced, and bad
 * input is a 400 that names the field; the answers keep their wire format (fields, nulls, types,
 * statuses, headers), and a subclass of the API's old name still works. Jobs are planted with SQL
 * in queues no capsule reads, so nothing runs them.
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
            .addClasses(
                ItRestApplication.class,
                ItAdmin.class,
                ItLegacyAdmin.class,
                ItDoctor.class,
                Http.class)
            // The console too, as the demo ships it: TRACE on its pages (issue #23).
            .addAsLibrary(ConsoleBrowserIT.consoleJar());
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  @Inject PgbusRuntime runtime;

  private static volatile boolean started;

  /**
   * Waits (up to a minute, once) until pgbus reports ready, as Enqueuer does: the IT database
   * starts empty, and under load the first tests ran before the start-up migration had created the
   * schema (500s naming a missing relation or function).
   */
  @BeforeEach
  void awaitStart() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (!started && !runtime.status().ready() && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(50);
    }
    started = true;
  }

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
    Http.Response r = get("jobs?state=dead&payload=" + filter, "admin", "admin-secret");
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
  void anAdminMovesAWaitingJobButNeverARunningOne() throws Exception {
    String q = queue();
    long scheduled = plant(q, "scheduled", "{}");
    long running = plant(q, "running", "{}");

    Http.Response moved =
        act(
            "jobs/" + scheduled + "/replace?runAt=2099-01-01T00:00:00Z&priority=-7",
            "admin",
            "admin-secret");
    assertEquals(200, moved.status(), moved.body());
    assertEquals("{\"action\":\"replace\",\"changed\":1}", moved.body());
    assertEquals(
        1,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.job WHERE id = ? AND priority = -7"
                + " AND run_at = '2099-01-01T00:00:00Z' AND state = 'scheduled'",
            scheduled));
    assertEquals(
        "admin",
        Sql.value(
            ds,
            "SELECT actor FROM pgbus.audit WHERE job_id = ? AND action = 'replace'",
            scheduled));

    Http.Response refused = act("jobs/" + running + "/replace?priority=3", "admin", "admin-secret");
    assertEquals(400, refused.status(), refused.body());
    assertTrue(refused.body().contains("\"field\":\"id\""), refused.body());
    assertTrue(refused.body().contains("is running, not waiting"), refused.body());
    assertTrue(
        refused.body().contains("enqueue a new job after it, or cancel it first"), refused.body());
    assertEquals("running", state(running));

    assertEquals(404, act("jobs/987654321/replace?priority=1", "admin", "admin-secret").status());
    assertEquals(
        403, act("jobs/" + scheduled + "/replace?priority=1", "viewer", "viewer-secret").status());
    Http.Response badPriority =
        act("jobs/" + scheduled + "/replace?priority=500", "admin", "admin-secret");
    assertEquals(400, badPriority.status(), badPriority.body());
    assertTrue(badPriority.body().contains("\"field\":\"priority\""), badPriority.body());
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
            "admin",
            "admin-secret"),
        "payload");
    assertField(
        get("jobs?payload=%7B" + "x".repeat(1200) + "%7D", "admin", "admin-secret"), "payload");
    assertField(get("jobs?queue=" + "q".repeat(60), "viewer", "viewer-secret"), "queue");
    assertField(get("jobs?limit=5000", "viewer", "viewer-secret"), "limit");
    assertField(act("jobs/explode?queue=x", "admin", "admin-secret"), "action");
  }

  private static void assertField(Http.Response r, String field) {
    assertEquals(400, r.status(), r.body());
    assertTrue(r.body().contains("\"field\":\"" + field + "\""), r.body());
  }

  @Test
  void queuesThroughputSchedulesAndFleetAnswerAViewer() throws Exception {
    String q = queue();
    plant(q, "completed", "{}");
    plant(q, "available", "{}");
    Http.Response queues = get("queues", "viewer", "viewer-secret");
    assertEquals(200, queues.status(), queues.body());
    assertTrue(queues.body().contains("\"queue\":\"" + q + "\""), queues.body());
    assertTrue(queues.body().contains("\"capsule\":\"admin\""), queues.body());
    Http.Response throughput = get("throughput", "viewer", "viewer-secret");
    assertTrue(throughput.body().contains("\"queue\":\"" + q + "\""), throughput.body());
    assertEquals(200, get("schedules", "viewer", "viewer-secret").status());
    assertEquals(404, get("crons", "viewer", "viewer-secret").status(), "crons went in #24");
    Http.Response fleet = get("fleet", "viewer", "viewer-secret");
    assertEquals(200, fleet.status(), fleet.body());
    assertTrue(fleet.body().contains("\"listeners\""), fleet.body());
    // pgbus.node: this JVM's row, live through its listener backend.
    assertTrue(fleet.body().contains("\"nodes\":[{"), fleet.body());
    assertTrue(fleet.body().contains("\"connected\":true"), fleet.body());
    // Its heartbeat: younger than its TTL, or its listener open, so alive (issue #14).
    assertTrue(fleet.body().contains("\"alive\":true"), fleet.body());
    assertTrue(fleet.body().contains("\"heartbeatTtl\":\""), fleet.body());
  }

  // Issue #28: why a job does not run, and what holds each queue back.

  @Test
  void explainSaysWhyAJobWaitsToAViewerMasksItsErrorAnd404sAMissingJob() throws Exception {
    String q = queue();
    long waiting = plant(q, "available", "{}");
    Sql.execute(ds, "SELECT pgbus.pause(?)", q);
    Http.Response r = get("jobs/" + waiting + "/explain", "viewer", "viewer-secret");
    assertEquals(200, r.status(), r.body());
    JsonObject e = json(r.body()).asJsonObject();
    assertEquals(String.valueOf(waiting), e.getString("job"));
    assertEquals(q, e.getString("queue"));
    assertEquals("available", e.getString("state"));
    JsonObject first = e.getJsonArray("reasons").getJsonObject(0);
    assertEquals("queue_paused", first.getString("code"), r.body());
    assertTrue(first.getString("evidence").contains("paused_at"), r.body());
    assertTrue(first.getString("action").contains("resume"), r.body());
    assertTrue(first.containsKey("resolvesAt") && first.isNull("resolvesAt"), r.body());

    long dead = plant(q, "dead", "{}");
    Sql.execute(
        ds,
        "UPDATE pgbus.job SET errors = jsonb_build_array(jsonb_build_object('attempt', 1,"
            + " 'at', now(), 'error', 'card 4111 declined')) WHERE id = ?",
        dead);
    Http.Response asViewer = get("jobs/" + dead + "/explain", "viewer", "viewer-secret");
    assertEquals(200, asViewer.status(), asViewer.body());
    assertTrue(asViewer.body().contains("\"code\":\"dead\""), asViewer.body());
    assertFalse(asViewer.body().contains("4111"), asViewer.body());
    assertTrue(
        get("jobs/" + dead + "/explain", "admin", "admin-secret").body().contains("card 4111"));

    Http.Response missing = get("jobs/9223372036854775806/explain", "viewer", "viewer-secret");
    assertEquals(404, missing.status(), missing.body());
    assertTrue(missing.body().contains("\"field\":\"id\""), missing.body());
    assertEquals(401, get("jobs/" + waiting + "/explain", null, null).status());
    assertEquals(403, get("jobs/" + waiting + "/explain", "someone", "someone-secret").status());
    assertField(get("jobs/x/explain", "viewer", "viewer-secret"), "id");
  }

  @Test
  void queueBlockersCountTheWaitingJobsByCauseForAViewer() throws Exception {
    String q = queue();
    plant(q, "available", "{}");
    plant(q, "available", "{}");
    plant(q, "scheduled", "{}");
    Http.Response open = get("queues/blockers?queue=" + q, "viewer", "viewer-secret");
    assertEquals(200, open.status(), open.body());
    JsonObject b = json(open.body()).asJsonObject().getJsonArray("queues").getJsonObject(0);
    assertEquals(q, b.getString("queue"));
    assertEquals(3, b.getJsonNumber("waiting").longValue());
    assertEquals(2, b.getJsonNumber("runnableNow").longValue());
    assertEquals(1, b.getJsonObject("blockedBy").getJsonNumber("due_later").longValue());

    Sql.execute(ds, "SELECT pgbus.pause(?)", q);
    JsonObject paused =
        element(get("queues/blockers", "viewer", "viewer-secret").body(), "queues", "queue", q);
    assertEquals(0, paused.getJsonNumber("runnableNow").longValue());
    assertEquals(2, paused.getJsonObject("blockedBy").getJsonNumber("queue_paused").longValue());

    assertField(get("queues/blockers?queue=Not-A-Queue", "viewer", "viewer-secret"), "queue");
    assertEquals(401, get("queues/blockers", null, null).status());
  }

  @Test
  void theHistoryAnswersBothRolesWithinItsBoundsAndNamesABadOne() throws Exception {
    String q = queue();
    // A minute as the leader's rollup writes it (R__history.sql), ten minutes ago.
    Sql.execute(
        ds,
        """
        INSERT INTO pgbus.queue_minute (queue, minute, completed, failed, dead,
                                        wait_p50_ms, wait_p95_ms, wait_p99_ms,
                                        run_p50_ms, run_p95_ms, run_p99_ms)
        VALUES (?, date_trunc('minute', now()) - interval '10 minutes', 7, 2, 1,
                5, 50, 90, 100, 400, 800)
        """,
        q);
    for (String[] who : new String[][] {{"viewer", "viewer-secret"}, {"admin", "admin-secret"}}) {
      Http.Response r = get("history?queue=" + q, who[0], who[1]);
      assertEquals(200, r.status(), r.body());
      JsonObject body = json(r.body()).asJsonObject();
      assertEquals(1, body.getInt("stepMinutes"));
      var points = body.getJsonArray("points");
      assertTrue(points.size() >= 60 && points.size() <= 61, r.body());
      assertTrue(
          r.body()
              .contains(
                  "\"completed\":7,\"failed\":2,\"dead\":1,"
                      + "\"waitMs\":{\"p50\":5,\"p95\":50,\"p99\":90},"
                      + "\"runMs\":{\"p50\":100,\"p95\":400,\"p99\":800}"),
          r.body());
      // An empty minute has counts of 0 and no timings: written null, or left out where the
      // server's JSON-B drops nulls of a nested record (Liberty).
      assertTrue(
          java.util.regex.Pattern.compile(
                  "\"completed\":0,\"failed\":0,\"dead\":0(,\"waitMs\":null,\"runMs\":null)?\\}")
              .matcher(r.body())
              .find(),
          "the empty minutes: " + r.body());
    }
    assertEquals(401, get("history", null, null).status());
    assertEquals(403, get("history", "someone", "someone-secret").status());
    assertField(get("history?step=0", "viewer", "viewer-secret"), "step");
    assertField(get("history?step=1441", "viewer", "viewer-secret"), "step");
    assertField(
        get(
            "history?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&step=60",
            "viewer",
            "viewer-secret"),
        "from");
    assertField(get("history?from=yesterday", "viewer", "viewer-secret"), "from");
    assertField(get("history?queue=" + "q".repeat(60), "viewer", "viewer-secret"), "queue");
  }

  // Issue #23, second round: what an outside attack on the demo found.

  @Test
  void aViewerSeesNeitherTheErrorsNorTheLastErrorOfAJobWhilePayloadsAreMasked() throws Exception {
    String q = queue();
    String card = "4111-1111-1111-" + (1000 + (int) (Math.random() * 8999));
    long dead = plant(q, "dead", "{\"card\":\"" + card + "\"}");
    Sql.execute(
        ds,
        "UPDATE pgbus.job SET errors = jsonb_build_array(jsonb_build_object('attempt', 1,"
            + " 'at', now(), 'error', ?::text)) WHERE id = ?",
        "java.lang.IllegalStateException: card " + card + " declined for ada@example.com",
        dead);
    for (String path :
        List.of("jobs/" + dead, "jobs?queue=" + q, "jobs?queue=" + q + "&state=dead")) {
      Http.Response asViewer = get(path, "viewer", "viewer-secret");
      assertEquals(200, asViewer.status(), asViewer.body());
      assertTrue(asViewer.body().contains("\"id\":\"" + dead + "\""), asViewer.body());
      assertFalse(asViewer.body().contains(card), path + ": " + asViewer.body());
      assertFalse(asViewer.body().contains("ada@example.com"), path + ": " + asViewer.body());
    }
    Http.Response asAdmin = get("jobs/" + dead, "admin", "admin-secret");
    assertTrue(asAdmin.body().contains("ada@example.com"), asAdmin.body());
    assertTrue(get("jobs?queue=" + q, "admin", "admin-secret").body().contains(card));
  }

  @Test
  void aViewersPayloadSearchIsRefusedWhilePayloadsAreMasked() throws Exception {
    String q = queue();
    plant(q, "dead", "{\"pin\":\"0417\"}");
    String filter = URLEncoder.encode("{\"pin\":\"0417\"}", StandardCharsets.UTF_8);
    Http.Response r = get("jobs?queue=" + q + "&payload=" + filter, "viewer", "viewer-secret");
    assertEquals(403, r.status(), r.body());
    assertTrue(r.body().contains("\"field\":\"payload\""), r.body());
    assertFalse(r.body().contains("\"jobs\""), r.body());
    assertEquals(
        1,
        ids(get("jobs?queue=" + q + "&payload=" + filter, "admin", "admin-secret").body()).size());
  }

  @Test
  void payloadSearchesBeyondTheUsersBudgetGet429WithRetryAfter() throws Exception {
    String q = queue();
    String filter = URLEncoder.encode("{\"pin\":\"0000\"}", StandardCharsets.UTF_8);
    Http.Response limited = null;
    for (int i = 0; i < 40 && limited == null; i++) {
      Http.Response r = get("jobs?queue=" + q + "&payload=" + filter, "admin", "admin-secret");
      if (r.status() == 429) {
        limited = r;
      } else {
        assertEquals(200, r.status(), r.body());
      }
    }
    assertNotNull(limited, "40 payload searches at once, none refused");
    assertTrue(limited.body().contains("\"error\":\"rate-limited\""), limited.body());
    assertTrue(
        limited.body().startsWith("{\"error\":\"rate-limited\",\"field\":\"payload\",\"message\":"),
        limited.body());
    assertEquals("nosniff", limited.headers().firstValue("X-Content-Type-Options").orElse(null));
    int retryAfter = Integer.parseInt(limited.headers().firstValue("Retry-After").orElse("-1"));
    assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
    // Another user's budget is their own, and searches without a payload are not counted.
    assertEquals(200, get("jobs?queue=" + q, "admin", "admin-secret").status());
    // The budget refills, one search a second: after 11 s it is whole again for the other tests.
    long limitedAt = System.nanoTime();
    io.pgbus.it.support.Await.until(
        "the budget refilled",
        java.time.Duration.ofSeconds(30),
        () -> System.nanoTime() - limitedAt > java.time.Duration.ofSeconds(11).toNanos());
    assertEquals(
        200, get("jobs?queue=" + q + "&payload=" + filter, "admin", "admin-secret").status());
  }

  @Test
  void theDoctorIsForAdminsOnlyOnTheAdminApiAsOnItsOwnPath() throws Exception {
    String own = Http.root(url) + url.getPath() + "api/pgbus/doctor";
    Http.Response viaAdmin = get("doctor", "viewer", "viewer-secret");
    assertEquals(403, viaAdmin.status(), viaAdmin.body());
    assertFalse(viaAdmin.body().contains("max_connections"), viaAdmin.body());
    assertEquals(403, Http.get(own, "viewer", "viewer-secret").status());
    assertEquals(200, get("doctor", "admin", "admin-secret").status());
    assertEquals(200, Http.get(own, "admin", "admin-secret").status());
  }

  @Test
  void traceIsRefusedOnTheConsoleAndTheAdminApiAndEchoesNoCredentials() throws Exception {
    String base = Http.root(url) + url.getPath();
    String credentials =
        java.util.Base64.getEncoder()
            .encodeToString("admin:admin-secret".getBytes(StandardCharsets.UTF_8));
    for (String path :
        List.of("pgbus/", "pgbus/app.js", "api/pgbus/admin/jobs", "api/pgbus/doctor")) {
      for (String user : new String[] {"admin", null}) {
        Http.Response r = Http.request("TRACE", base + path, user, "admin-secret");
        assertTrue(
            r.status() == 405 || r.status() == 403 || (user == null && r.status() == 401),
            "TRACE " + path + " as " + user + ": " + r.status() + " " + r.body());
        assertFalse(r.body().contains(credentials), path + ": " + r.body());
        assertFalse(
            r.body().toLowerCase(java.util.Locale.ROOT).contains("authorization"), r.body());
      }
    }
  }

  @Test
  void everyAdminApiAndDoctorAnswerCarriesNosniff() throws Exception {
    String own = Http.root(url) + url.getPath() + "api/pgbus/doctor";
    List<Http.Response> answers =
        List.of(
            get("jobs?state=%3Cscript%3E", "viewer", "viewer-secret"),
            get("jobs", "viewer", "viewer-secret"),
            get("jobs/999999999999", "viewer", "viewer-secret"),
            get("doctor", "admin", "admin-secret"),
            act("jobs/explode", "admin", "admin-secret"),
            Http.get(own, "admin", "admin-secret"));
    for (Http.Response r : answers) {
      assertEquals(
          "nosniff",
          r.headers().firstValue("X-Content-Type-Options").orElse(null),
          r.status() + " " + r.body());
    }
  }

  @Test
  void aScheduleBodyOverTheMaximumIsRefusedWith413() throws Exception {
    Http.Response csrf = get("csrf", "admin", "admin-secret");
    String token = csrf.cookie("pgbus-csrf");
    String big =
        "{\"name\":\"big\",\"cron\":\"0 3 * * *\",\"queue\":\"it_big\",\"payload\":\""
            + "x".repeat(300_000)
            + "\"}";
    Http.Response sized =
        Http.requestWithBody(
            "POST",
            api() + "schedules",
            "admin",
            "admin-secret",
            big,
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(413, sized.status(), sized.body());
    assertEquals(List.of("error", "field", "message"), keys(json(sized.body())));
    assertTrue(sized.body().startsWith("{\"error\":\"too-large\",\"field\":\"body\","));
    assertTrue(sized.body().contains("262144"), sized.body());
    // Without a Content-Length (chunked), the read stops at the bound.
    Http.Response chunked =
        Http.requestStreaming(
            "POST",
            api() + "schedules",
            "admin",
            "admin-secret",
            big,
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(413, chunked.status(), chunked.body());
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM pgbus.schedule WHERE name = 'big'"));
  }

  @Test
  void aCronThatNeverFiresIsRefusedNamingTheExpression() throws Exception {
    Http.Response csrf = get("csrf", "admin", "admin-secret");
    String token = csrf.cookie("pgbus-csrf");
    Http.Response r =
        Http.requestWithBody(
            "POST",
            api() + "schedules",
            "admin",
            "admin-secret",
            "{\"name\":\"feb31\",\"cron\":\"0 0 31 2 *\",\"queue\":\"it_feb\"}",
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(400, r.status(), r.body());
    assertTrue(r.body().contains("0 0 31 2 *") && r.body().contains("never"), r.body());
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM pgbus.schedule WHERE name = 'feb31'"));
  }

  // The wire format, pinned (issue #24): every endpoint's fields, null or absent, and their JSON
  // types, as docs/admin-api.md documents them and the console reads them. A shape lists an
  // object's keys sorted, each with its type: s string, i whole number, d other number, b boolean,
  // null; an array shows the distinct shapes of its elements.

  @Test
  void aWorkflowReadsAsItsGraphAndAnAdminCancelsItWholeAudited() throws Exception {
    String q = queue();
    long workflow =
        ((Number)
                Sql.value(
                    ds,
                    "SELECT workflow_id FROM pgbus.enqueue_workflow('order-42', ?::jsonb)",
                    "[{\"node\":\"charge\",\"queue\":\"%s\",\"payload\":{}},".formatted(q)
                        + "{\"node\":\"refund\",\"queue\":\"%s\",\"payload\":{},".formatted(q)
                        + "\"after\":[{\"node\":\"charge\",\"kind\":\"failure\"}]}]"))
            .longValue();
    Http.Response read = get("workflows/" + workflow, "viewer", "viewer-secret");
    assertEquals(200, read.status(), read.body());
    JsonValue w = json(read.body());
    assertEquals(
        List.of(
            "id", "name", "createdAt", "createdBy", "state", "counts", "nodes", "edges", "more"),
        keys(w));
    assertEquals(
        "{counts:{cancelled:i,completed:i,dead:i,running:i,waiting:i},createdAt:s,createdBy:s,"
            + "edges:[{from:s,kind:s,onFailure:s,predicate:null,state:s,to:s}],id:s,more:b,name:s,"
            + "nodes:[{job:s,node:s,queue:s,state:s}],state:s}",
        shape(w));
    assertEquals("running", w.asJsonObject().getString("state"));
    assertEquals(2, w.asJsonObject().getJsonObject("counts").getInt("waiting"));
    assertEquals(
        "failure", w.asJsonObject().getJsonArray("edges").getJsonObject(0).getString("kind"));
    String root = w.asJsonObject().getJsonArray("nodes").getJsonObject(0).getString("job");
    Http.Response job = get("jobs/" + root, "admin", "admin-secret");
    assertEquals(String.valueOf(workflow), json(job.body()).asJsonObject().getString("workflowId"));

    Http.Response none = get("workflows/999999999", "viewer", "viewer-secret");
    assertEquals(404, none.status(), none.body());
    assertTrue(none.body().contains("\"field\":\"id\""), none.body());
    assertEquals(403, act("workflows/" + workflow + "/cancel", "viewer", "viewer-secret").status());

    Http.Response cancel = act("workflows/" + workflow + "/cancel", "admin", "admin-secret");
    assertEquals(200, cancel.status(), cancel.body());
    assertEquals("{\"action\":\"cancel\",\"changed\":2}", cancel.body());
    assertEquals(
        "cancelled",
        json(get("workflows/" + workflow, "viewer", "viewer-secret").body())
            .asJsonObject()
            .getString("state"));
    assertEquals(
        1L,
        ((Number)
                Sql.value(
                    ds,
                    "SELECT count(*) FROM pgbus.audit WHERE action = 'workflow_cancel'"
                        + " AND actor = 'admin' AND (detail ->> 'workflow')::bigint = ?",
                    workflow))
            .longValue());
    Http.Response retry = act("workflows/" + workflow + "/retry", "admin", "admin-secret");
    assertEquals("{\"action\":\"retry\",\"changed\":0}", retry.body());
    assertEquals(404, act("workflows/999999999/retry", "admin", "admin-secret").status());
  }

  private static JsonValue json(String body) {
    try (JsonReader r = Json.createReader(new StringReader(body))) {
      return r.readValue();
    }
  }

  static String shape(String body) {
    return shape(json(body));
  }

  static String shape(JsonValue v) {
    return switch (v.getValueType()) {
      case OBJECT ->
          v.asJsonObject().entrySet().stream()
              .sorted(Map.Entry.comparingByKey())
              .map(e -> e.getKey() + ":" + shape(e.getValue()))
              .collect(Collectors.joining(",", "{", "}"));
      case ARRAY ->
          v.asJsonArray().stream()
              .map(AdminApiIT::shape)
              .distinct()
              .collect(Collectors.joining("|", "[", "]"));
      case STRING -> "s";
      case NUMBER -> ((JsonNumber) v).isIntegral() ? "i" : "d";
      case TRUE, FALSE -> "b";
      case NULL -> "null";
    };
  }

  /** The object's keys in the order they came: the fields of a LinkedHashMap kept their order. */
  private static List<String> keys(JsonValue v) {
    return List.copyOf(v.asJsonObject().keySet());
  }

  /** The element of the array {@code array} whose {@code key} is {@code value}. */
  private static JsonObject element(String body, String array, String key, String value) {
    return json(body).asJsonObject().getJsonArray(array).stream()
        .map(JsonValue::asJsonObject)
        .filter(o -> o.containsKey(key) && value.equals(o.getString(key, null)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + key + " " + value + " in " + body));
  }

  private static final String JOB =
      "attempt:i,attemptedAt:s,attemptedBy:s,attemptsBeforeReplay:i,correlationId:s,createdAt:s,enqueuedBy:s,"
          + "finalizedAt:s,id:s,lastError:%s,leaseExpiresAt:null,maxAttempts:i,priority:i,"
          + "progress:s,queue:s,runAt:s,state:s,uniqueKey:s";

  private static final List<String> JOB_KEYS =
      List.of(
          "id",
          "queue",
          "state",
          "priority",
          "attempt",
          "maxAttempts",
          "runAt",
          "createdAt",
          "attemptedAt",
          "finalizedAt",
          "attemptedBy",
          "leaseExpiresAt",
          "uniqueKey",
          "enqueuedBy",
          "correlationId",
          "lastError",
          "progress",
          "attemptsBeforeReplay");

  @Test
  void theJobAnswersKeepTheirFieldsNullsAndTypes() throws Exception {
    String q = queue();
    long dead = plant(q, "dead", "{\"k\":1}");
    Sql.execute(
        ds,
        """
        UPDATE pgbus.job SET unique_key = 'uk-' || queue, enqueued_by = 'alice',
               correlation_id = 'req-7', attempted_at = now(), attempted_by = 'host:1',
               errors = jsonb_build_array(jsonb_build_object('attempt', 1, 'at', now(),
                                                             'error', 'boom')),
               progress = jsonb_build_object('percent', 40), result = '{"r":1}'::jsonb
         WHERE id = ?
        """,
        dead);
    String summary = "{" + JOB + "}";
    Http.Response admin = get("jobs?queue=" + q, "admin", "admin-secret");
    assertEquals(200, admin.status(), admin.body());
    assertEquals("{jobs:[" + summary.formatted("s") + "],next:null}", shape(admin.body()));
    assertEquals(List.of("jobs", "next"), keys(json(admin.body())));
    JsonObject job = json(admin.body()).asJsonObject().getJsonArray("jobs").getJsonObject(0);
    assertEquals(JOB_KEYS, keys(job));
    assertEquals(String.valueOf(dead), job.getString("id"));
    assertEquals("dead", job.getString("state"));
    assertEquals("boom", job.getString("lastError"));
    // Masked for a viewer: lastError null, still present.
    Http.Response viewer = get("jobs?queue=" + q, "viewer", "viewer-secret");
    assertEquals("{jobs:[" + summary.formatted("null") + "],next:null}", shape(viewer.body()));
    plant(q, "dead", "{}");
    Http.Response paged = get("jobs?queue=" + q + "&limit=1", "admin", "admin-secret");
    assertEquals("s", shape(json(paged.body()).asJsonObject().get("next")), paged.body());

    String full =
        "{batchId:null,dependencies:null,errors:%s,"
            + JOB
            + ",expired:null,payload:%s,payloadMasked:b,result:%s,startBy:null,workflowId:null}";
    Http.Response one = get("jobs/" + dead, "admin", "admin-secret");
    assertEquals(200, one.status(), one.body());
    assertEquals(sortedShape(full.formatted("s", "s", "s", "s")), shape(one.body()));
    var fullKeys = new ArrayList<>(JOB_KEYS);
    fullKeys.remove("attemptsBeforeReplay"); // the detail names it last
    fullKeys.addAll(
        List.of(
            "payload",
            "payloadMasked",
            "errors",
            "result",
            "batchId",
            "dependencies",
            "attemptsBeforeReplay",
            "startBy",
            "expired",
            "workflowId"));
    assertEquals(fullKeys, keys(json(one.body())));
    assertFalse(json(one.body()).asJsonObject().getBoolean("payloadMasked"));
    Http.Response masked = get("jobs/" + dead, "viewer", "viewer-secret");
    assertEquals(sortedShape(full.formatted("null", "null", "null", "null")), shape(masked.body()));
    assertTrue(json(masked.body()).asJsonObject().getBoolean("payloadMasked"));

    Http.Response replayed = act("jobs/" + dead + "/replay", "admin", "admin-secret");
    assertEquals("{action:s,changed:i}", shape(replayed.body()));
    assertEquals("{\"action\":\"replay\",\"changed\":1}", sortedJson(replayed.body()));
    Http.Response bulk =
        act("jobs/cancel?queue=" + q + "&state=available", "admin", "admin-secret");
    assertEquals("{\"action\":\"cancel\",\"changed\":1}", sortedJson(bulk.body()));
  }

  /** The object with its keys sorted, for answers built with Map.of (no order on the wire). */
  private static String sortedJson(String body) {
    return json(body).asJsonObject().entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> "\"" + e.getKey() + "\":" + e.getValue())
        .collect(Collectors.joining(",", "{", "}"));
  }

  @Test
  void aStateOfMoreThanTheCapIsTheStatisticsEstimateAndSaysSo() throws Exception {
    // Issue #27: past JobAdmin.COUNT_CAP (by the statistics) the live jobs are not counted.
    String big = queue();
    Sql.execute(
        ds,
        "INSERT INTO pgbus.job (queue, state, payload, finalized_at)"
            + " SELECT ?, 'dead', '{}', now() FROM generate_series(1, 3000)",
        big);
    plant(big, "scheduled", "{}");
    try {
      Sql.execute(ds, "ANALYZE pgbus.job");
      Http.Response r = get("queues", "viewer", "viewer-secret");
      assertEquals(200, r.status(), r.body());
      JsonObject q = element(r.body(), "queues", "queue", big);
      assertEquals(List.of("dead"), strings(q.getJsonArray("countsEstimated")), q.toString());
      assertEquals(List.of(), strings(q.getJsonArray("countsCapped")), q.toString());
      int dead = q.getJsonObject("counts").getInt("dead");
      assertTrue(dead > 2_000 && dead < 4_000, "an estimate near 3,000: " + dead);
      assertEquals(1, q.getJsonObject("counts").getInt("scheduled"), "counted exactly");
    } finally {
      Sql.execute(ds, "DELETE FROM pgbus.job WHERE queue = ?", big);
    }
  }

  private static List<String> strings(jakarta.json.JsonArray a) {
    return a.getValuesAs(jakarta.json.JsonString.class).stream()
        .map(jakarta.json.JsonString::getString)
        .toList();
  }

  @Test
  void theQueueAnswersKeepTheirFieldsNullsAndTypes() throws Exception {
    String plain = queue();
    String limited = queue();
    String rated = queue();
    plant(plain, "available", "{}");
    plant(limited, "available", "{}");
    plant(rated, "available", "{}");
    Sql.execute(
        ds,
        "INSERT INTO pgbus.queue_limit (queue, global_concurrency, key_concurrency) VALUES (?, 5,"
            + " 1)",
        limited);
    Sql.execute(
        ds,
        "INSERT INTO pgbus.queue_limit (queue, key_concurrency, rate_limit, rate_window, key_fifo)"
            + " VALUES (?, 2, 10, interval '1 second', true)",
        rated);
    try {
      Http.Response r = get("queues", "viewer", "viewer-secret");
      assertEquals(200, r.status(), r.body());
      JsonObject body = json(r.body()).asJsonObject();
      assertEquals(1_000, body.getInt("countCap"), "JobAdmin.COUNT_CAP");
      String counts =
          "counts:{available:i,cancelled:i,completed:i,dead:i,retryable:i,running:i,scheduled:i},"
              + "countsCapped:[],countsEstimated:[],";
      assertEquals(
          "{" + counts + "limit:null,oldestWaitingMs:i,paused:b,queue:s,readers:[]}",
          shape(element(r.body(), "queues", "queue", plain)));
      JsonObject lim = element(r.body(), "queues", "queue", limited);
      assertEquals(
          "{"
              + counts
              + "limit:{globalConcurrency:i,keyConcurrency:i,running:i,waitingOnLimit:i,"
              + "waitingOnWorker:i},oldestWaitingMs:i,paused:b,queue:s,readers:[]}",
          shape(lim));
      assertEquals(
          List.of(
              "queue",
              "counts",
              "countsCapped",
              "countsEstimated",
              "oldestWaitingMs",
              "paused",
              "limit",
              "readers"),
          keys(lim));
      assertEquals(
          List.of(
              "globalConcurrency",
              "keyConcurrency",
              "running",
              "waitingOnLimit",
              "waitingOnWorker"),
          keys(lim.get("limit")));
      JsonObject rate = element(r.body(), "queues", "queue", rated).getJsonObject("limit");
      assertEquals(
          "{globalConcurrency:null,keyConcurrency:i,keyFifo:b,keyFifoSkipDead:b,rateLimit:i,"
              + "rateWindowMs:i,running:i,startsInWindow:i,waitingOnLimit:i,waitingOnWorker:i}",
          shape(rate));
      assertEquals(
          List.of(
              "globalConcurrency",
              "keyConcurrency",
              "keyFifo",
              "keyFifoSkipDead",
              "running",
              "waitingOnLimit",
              "waitingOnWorker",
              "rateLimit",
              "rateWindowMs",
              "startsInWindow"),
          keys(rate));
      assertEquals(1000, rate.getInt("rateWindowMs"));
      // The limits card's read: the limits, the fair share (V50, set by a deployment), the history.
      Sql.execute(
          ds, "SELECT pgbus.queue_fair_set(?, 'concurrency_key', '{\"b\": 3, \"a\": 2}')", limited);
      Http.Response card = get("queues/" + limited + "/limit", "viewer", "viewer-secret");
      assertEquals(200, card.status(), card.body());
      assertEquals(
          "{\"queue\":\""
              + limited
              + "\",\"limit\":{\"globalConcurrency\":5,\"keyConcurrency\":1,\"rateLimit\":null,"
              + "\"rateWindowMs\":null,\"keyFifo\":false,\"keyFifoSkipDead\":false},"
              + "\"fairKey\":\"concurrency-key\",\"fairWeights\":{\"a\":2,\"b\":3},"
              + "\"history\":[]}",
          card.body());
      Http.Response none = get("queues/" + plain + "/limit", "viewer", "viewer-secret");
      assertEquals(
          "{\"queue\":\""
              + plain
              + "\",\"limit\":null,\"fairKey\":null,\"fairWeights\":null,\"history\":[]}",
          none.body());
      // The capsule's own queue: read by this JVM's capsule.
      assertEquals(
          "{capsule:s,worker:s}",
          shape(
              element(r.body(), "queues", "queue", "it_admin_read")
                  .getJsonArray("readers")
                  .getJsonObject(0)));
    } finally {
      Sql.execute(ds, "DELETE FROM pgbus.queue_limit WHERE queue IN (?, ?)", limited, rated);
    }

    Http.Response paused = act("queues/" + plain + "/pause", "admin", "admin-secret");
    assertEquals(
        "{\"queue\":\"" + plain + "\",\"action\":\"pause\",\"changed\":true,\"paused\":true}",
        paused.body());
    Http.Response throughput = get("throughput", "viewer", "viewer-secret");
    assertEquals(200, throughput.status(), throughput.body());
    assertEquals(60, json(throughput.body()).asJsonObject().getInt("windowMinutes"));
    assertTrue(
        shape(throughput.body())
            .matches("\\{points:\\[(\\{completed:i,dead:i,minute:s,queue:s\\})?],windowMinutes:i}"),
        throughput.body());
  }

  @Test
  void theScheduleAnswersKeepTheirFieldsNullsAndTypes() throws Exception {
    String name = "wire-" + queue();
    String schedule =
        "{cron:s,error:null,lastJobId:null,lastOutcome:null,lastRun:null,maxAttempts:%s,"
            + "misfire:s,name:s,nextRun:s,overlap:s,"
            + "catchUpLimit:%s,paused:b,payload:%s,payloadMasked:b,priority:i,problem:null,"
            + "queue:s,source:s,updatedAt:s,updatedBy:s,zone:s}";
    List<String> scheduleKeys =
        List.of(
            "name",
            "cron",
            "zone",
            "queue",
            "payload",
            "payloadMasked",
            "priority",
            "maxAttempts",
            "misfire",
            "catchUpLimit",
            "overlap",
            "paused",
            "lastRun",
            "lastJobId",
            "lastOutcome",
            "nextRun",
            "source",
            "updatedAt",
            "updatedBy",
            "error",
            "problem");
    Http.Response csrf = get("csrf", "admin", "admin-secret");
    assertEquals("{header:s,token:s}", shape(csrf.body()));
    assertEquals("X-Pgbus-CSRF", json(csrf.body()).asJsonObject().getString("header"));
    String token = csrf.cookie("pgbus-csrf");
    Http.Response created =
        Http.requestWithBody(
            "POST",
            api() + "schedules",
            "admin",
            "admin-secret",
            "{\"name\":\"" + name + "\",\"cron\":\"0 3 1 1 *\",\"queue\":\"it_wire\"}",
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(201, created.status(), created.body());
    assertEquals(sortedShape(schedule.formatted("null", "null", "s")), shape(created.body()));
    assertEquals(scheduleKeys, keys(json(created.body())));
    Http.Response updated =
        Http.requestWithBody(
            "POST",
            api() + "schedules/" + name,
            "admin",
            "admin-secret",
            "{\"cron\":\"0 3 1 1 *\",\"queue\":\"it_wire\",\"maxAttempts\":3,"
                + "\"misfire\":\"catch_up\",\"catchUpLimit\":2}",
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(200, updated.status(), updated.body());
    assertEquals(sortedShape(schedule.formatted("i", "i", "s")), shape(updated.body()));

    Http.Response asViewer = get("schedules/" + name, "viewer", "viewer-secret");
    assertEquals(200, asViewer.status(), asViewer.body());
    JsonObject viewed = json(asViewer.body()).asJsonObject();
    assertEquals(
        sortedShape(
            schedule
                .formatted("i", "i", "null")
                .replace("}", ",history:[{action:s,actor:s," + "at:s,jobId:null,queue:s}]}")),
        shape(viewed));
    var withHistory = new ArrayList<>(scheduleKeys);
    withHistory.add("history");
    assertEquals(withHistory, keys(viewed));
    assertEquals(
        List.of("at", "actor", "action", "queue", "jobId"),
        keys(viewed.getJsonArray("history").get(0)));

    Http.Response page = get("schedules?limit=500", "viewer", "viewer-secret");
    assertEquals(200, page.status(), page.body());
    assertEquals(List.of("schedules", "next"), keys(json(page.body())));
    assertEquals(
        sortedShape(schedule.formatted("i", "i", "null")),
        shape(element(page.body(), "schedules", "name", name)));

    Http.Response triggered = act("schedules/" + name + "/trigger", "admin", "admin-secret");
    assertEquals(200, triggered.status(), triggered.body());
    assertEquals(List.of("name", "action", "jobId", "changed"), keys(json(triggered.body())));
    assertEquals("{action:s,changed:b,jobId:s,name:s}", shape(triggered.body()));
    Http.Response pausedSchedule = act("schedules/" + name + "/pause", "admin", "admin-secret");
    assertEquals(
        "{\"name\":\"" + name + "\",\"action\":\"pause\",\"changed\":true}", pausedSchedule.body());
    assertEquals(200, act("schedules/" + name + "/delete", "admin", "admin-secret").status());
    Http.Response gone = get("schedules/" + name, "viewer", "viewer-secret");
    assertEquals(404, gone.status(), gone.body());
    assertEquals("{\"error\":\"not-found\",\"field\":\"name\"}", gone.body());
  }

  /** A shape written by hand with its keys in any order, as {@link #shape} sorts them. */
  private static String sortedShape(String shape) {
    return shape(
        json(
            shape
                .replaceAll("([{,])([A-Za-z]+):", "$1\"$2\":")
                .replaceAll(":s([,}\\]|])", ":\"\"$1")
                .replaceAll(":i([,}\\]|])", ":0$1")
                .replaceAll(":b([,}\\]|])", ":true$1")));
  }

  @Test
  void theFleetAnswerKeepsItsFieldsNullsAndTypes() throws Exception {
    Http.Response r = get("fleet", "viewer", "viewer-secret");
    assertEquals(200, r.status(), r.body());
    JsonObject body = json(r.body()).asJsonObject();
    assertEquals(List.of("leader", "listeners", "nodes", "self"), keys(body));
    JsonObject self = body.getJsonObject("self");
    assertEquals(
        "{capsules:[{concurrency:i,inFlight:i,name:s,queues:[s]}],leader:b,listener:s,mode:s,"
            + "worker:s}",
        shape(self));
    assertEquals(List.of("worker", "leader", "listener", "mode", "capsules"), keys(self));
    assertEquals(
        List.of("name", "queues", "concurrency", "inFlight"),
        keys(self.getJsonArray("capsules").get(0)));
    JsonObject node = element(r.body(), "nodes", "worker", self.getString("worker"));
    assertEquals(
        "{alive:b,capsules:[{concurrency:i,name:s,queues:[s]}],connected:b,heartbeatTtl:s,"
            + "host:s,leader:b,listener:s,mode:s,pid:i,seenAt:s,startedAt:s,worker:s}",
        shape(node));
    assertEquals(
        List.of(
            "worker",
            "host",
            "pid",
            "connected",
            "leader",
            "listener",
            "mode",
            "startedAt",
            "seenAt",
            "heartbeatTtl",
            "alive",
            "capsules"),
        keys(node));
    assertTrue(
        shape(body.get("listeners"))
            .matches("\\[(\\{clientAddress:(s|null),pid:i,since:(s|null)\\}\\|?)+]"),
        r.body());
    assertEquals(
        List.of("pid", "clientAddress", "since"), keys(body.getJsonArray("listeners").get(0)));
    assertTrue(shape(body.get("leader")).matches("s|null"), r.body());
  }

  /** RESTEasy's answer when its role check (resteasy.role.based.security) refuses a method. */
  private static final String RESTEASY_FORBIDDEN = "Access forbidden: role not allowed";

  @Test
  void theErrorAnswersKeepTheirBodiesStatusesAndHeaders() throws Exception {
    // The server refuses these before pgbus runs: Open Liberty enforces @RolesAllowed itself
    // (no body), WildFly's security-constraint (web-secured.xml, Undertow's error page) and
    // RESTEasy's role check do. Its challenge names its realm.
    boolean liberty = TestServer.current() == TestServer.LIBERTY;
    Http.Response anonymous = get("jobs", null, null);
    Http.Response nobody = get("jobs", "someone", "someone-secret");
    Http.Response bad = get("jobs?state=deadish", "viewer", "viewer-secret");
    Http.Response missing = get("jobs/999999999999", "viewer", "viewer-secret");
    Http.Response csrf = Http.request("POST", api() + "jobs/1/replay", "admin", "admin-secret");
    String filter = URLEncoder.encode("{\"pin\":\"1\"}", StandardCharsets.UTF_8);
    Http.Response masked = get("jobs?payload=" + filter, "viewer", "viewer-secret");
    Http.Response viewerAct = act("jobs/1/replay", "viewer", "viewer-secret");
    Http.Response viewerDoctor = get("doctor", "viewer", "viewer-secret");
    Http.Response doctor = get("doctor", "admin", "admin-secret");
    org.junit.jupiter.api.Assertions.assertAll(
        () -> assertEquals(401, anonymous.status()),
        () ->
            assertEquals(
                liberty
                    ? ""
                    : "<html><head><title>Error</title></head><body>Unauthorized</body></html>",
                anonymous.body()),
        () ->
            assertEquals(
                liberty ? "Basic realm=\"pgbus\"" : "Basic realm=\"ApplicationRealm\"",
                anonymous.headers().firstValue("WWW-Authenticate").orElse(null),
                anonymous.headers().map().toString()),
        () ->
            assertEquals(
                null, anonymous.headers().firstValue("X-Content-Type-Options").orElse(null)),
        () -> assertEquals(403, nobody.status()),
        () ->
            assertEquals(
                liberty
                    ? ""
                    : "<html><head><title>Error</title></head><body>Forbidden</body></html>",
                nobody.body()),
        () -> assertEquals(400, bad.status()),
        () -> assertEquals(List.of("error", "field", "message"), keys(json(bad.body()))),
        () ->
            assertTrue(
                bad.body().startsWith("{\"error\":\"bad-request\",\"field\":\"state\","),
                bad.body()),
        () -> assertEquals(404, missing.status()),
        () -> assertEquals("{\"error\":\"not-found\",\"field\":\"id\"}", missing.body()),
        () ->
            assertEquals(
                "application/json",
                missing.headers().firstValue("Content-Type").orElse("").replaceAll(";.*", "")),
        () -> assertEquals(403, csrf.status()),
        () -> assertEquals("{\"error\":\"csrf\",\"field\":\"X-Pgbus-CSRF\"}", csrf.body()),
        () -> assertEquals(403, masked.status()),
        () -> assertEquals(List.of("error", "field", "message"), keys(json(masked.body()))),
        () ->
            assertTrue(
                masked.body().startsWith("{\"error\":\"forbidden\",\"field\":\"payload\","),
                masked.body()),
        () -> assertEquals(403, viewerAct.status()),
        () -> assertEquals(liberty ? "" : RESTEASY_FORBIDDEN, viewerAct.body()),
        () -> assertEquals(403, viewerDoctor.status()),
        () -> assertEquals(liberty ? "" : RESTEASY_FORBIDDEN, viewerDoctor.body()),
        () -> assertEquals(200, doctor.status(), doctor.body()),
        () ->
            assertEquals(
                "nosniff", doctor.headers().firstValue("X-Content-Type-Options").orElse(null)));
  }

  @Test
  void aSubclassOfTheOldClassNameStillServesTheApi() throws Exception {
    String legacy = Http.root(url) + url.getPath() + "api/pgbus/legacy-admin/";
    Http.Response queues = Http.get(legacy + "queues", "viewer", "viewer-secret");
    assertEquals(200, queues.status(), queues.body());
    assertTrue(queues.body().startsWith("{\"countCap\":"), queues.body());
    long dead = plant(queue(), "dead", "{}");
    Http.Response csrf = Http.get(legacy + "csrf", "admin", "admin-secret");
    String token = csrf.cookie("pgbus-csrf");
    Http.Response replay =
        Http.request(
            "POST",
            legacy + "jobs/" + dead + "/replay",
            "admin",
            "admin-secret",
            "X-Pgbus-CSRF",
            token,
            "Cookie",
            "pgbus-csrf=" + token);
    assertEquals(200, replay.status(), replay.body());
    assertEquals("available", state(dead));
    assertEquals(403, Http.get(legacy + "doctor", "viewer", "viewer-secret").status());
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.console.ConsoleInitializer;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.importer.ExplodedImporter;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The web console (pgbus-console) in a real headless Chromium, against a WAR shaped like the demo:
 * pgbus-impl, the console jar, and the admin API at /api/pgbus/admin. An admin logs in, sees the
 * overview charts drawn from real data, finds a dead job by a value in its payload, replays it and
 * watches it complete, and pauses and resumes a queue; a viewer sees no action button and the API
 * refuses their POST. Each page's screenshot is saved to target/console-screenshots/<server>.
 */
@ExtendWith(ArquillianExtension.class)
class ConsoleBrowserIT {
  private static final String QUEUE = "it_console";
  private static final String PAUSE_QUEUE = "it_console_pause";

  @Deployment(testable = false)
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "console",
                "pgbus.capsules=console",
                "pgbus.capsule.console.queues=" + QUEUE,
                "pgbus.capsule.console.concurrency=2",
                "pgbus.crons=nightly",
                "pgbus.cron.nightly.schedule=0 3 * * *",
                "pgbus.cron.nightly.queue=it_console_cron",
                "pgbus.console.refresh=1s")
            .addClasses(
                ItRestApplication.class,
                ItAdmin.class,
                ConsoleOrder.class,
                ConsoleOrderHandler.class)
            .addAsLibrary(consoleJar());
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  /** The pgbus-console jar of this build (a directory of classes when the reactor has no jar). */
  static JavaArchive consoleJar() {
    try {
      File f =
          new File(
              ConsoleInitializer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return f.isDirectory()
          ? ShrinkWrap.create(ExplodedImporter.class, "pgbus-console.jar")
              .importDirectory(f)
              .as(JavaArchive.class)
          : ShrinkWrap.createFromZipFile(JavaArchive.class, f);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @ArquillianResource URL url;

  private String console(String user, String password) {
    String root = Http.root(url);
    String withUser = root.replace("://", "://" + user + ":" + password + "@");
    return withUser + url.getPath() + "pgbus/";
  }

  /** The engine migrates the schema after the deployment: wait until the API can read it. */
  @BeforeEach
  void awaitTheAdminApi() throws Exception {
    String queues = Http.root(url) + url.getPath() + "api/pgbus/admin/queues";
    Await.until(
        "the admin API answers 200",
        Duration.ofSeconds(90),
        () -> Http.get(queues, "admin", "admin-secret").status() == 200);
  }

  @Test
  void anonymousUsersGetNeitherThePagesNorTheChartLibrary() throws Exception {
    String base = Http.root(url) + url.getPath();
    for (String path : List.of("pgbus/", "pgbus/app.js", "pgbus/lib/echarts.min.js", "pgbus")) {
      assertEquals(401, Http.get(base + path).status(), path);
    }
    // The WebJar is copied into the console jar, not bundled: nothing at the container's /webjars.
    assertEquals(404, Http.get(base + "webjars/echarts/5.3.1/dist/echarts.min.js").status());
    assertEquals(
        200, Http.get(base + "pgbus/lib/echarts.min.js", "viewer", "viewer-secret").status());
    Http.Response page = Http.get(base + "pgbus/", "viewer", "viewer-secret");
    assertTrue(page.headers().firstValue("Content-Security-Policy").orElse("").contains("'self'"));
    assertEquals(
        403,
        Http.get(base + "pgbus/", "someone", "someone-secret").status(),
        "a user without role");
  }

  @Test
  void anAdminSeesTheOverviewChartsDrawnFromRealData() throws Exception {
    plant(QUEUE, "completed", "{\"order\":\"done-1\"}");
    plant(QUEUE, "completed", "{\"order\":\"done-2\"}");
    plant(PAUSE_QUEUE, "scheduled", "{\"order\":\"later\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret"));
      b.find("body[data-page=overview] #depth-chart canvas");
      b.await(20, d -> intAttr(b, "#depth-chart", "data-points") > 0);
      b.await(20, d -> intAttr(b, "#throughput-chart", "data-points") > 0);
      // What ECharts holds, not what the page says it gave it.
      Number drawn =
          (Number)
              b.script(
                  "const o = echarts.getInstanceByDom(document.getElementById('depth-chart'))"
                      + ".getOption(); return o.series.flatMap(s => s.data).reduce((a, x) => a +"
                      + " (x || 0), 0);");
      assertTrue(drawn.longValue() >= 1, "the depth chart draws the planted jobs: " + drawn);
      Number finished =
          (Number)
              b.script(
                  "const o = echarts.getInstanceByDom(document.getElementById('throughput-chart'))"
                      + ".getOption(); return o.series.flatMap(s => s.data).reduce((a, p) => a +"
                      + " p[1], 0);");
      assertTrue(finished.longValue() >= 2, "the throughput chart counts finished jobs");
      b.find("tr[data-queue=" + QUEUE + "]");
      assertTrue(b.count("button.act") == 0, "the overview has no actions");
      b.screenshot("overview");
    }
  }

  @Test
  void aQueuesHistoryChartsTheMinutesTheLeaderWroteForEachRange() throws Exception {
    String queue = "it_console_history_" + UUID.randomUUID().toString().substring(0, 8);
    // A minute as the leader's rollup writes it (R__history.sql), ten minutes ago.
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement(
                """
                INSERT INTO pgbus.queue_minute (queue, minute, completed, failed, dead,
                                                wait_p50_ms, wait_p95_ms, wait_p99_ms,
                                                run_p50_ms, run_p95_ms, run_p99_ms)
                VALUES (?, date_trunc('minute', now()) - interval '10 minutes', 7, 2, 1,
                        5, 50, 90, 100, 400, 800)
                """)) {
      ps.setString(1, queue);
      ps.executeUpdate();
    }
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret") + "#/queue/" + queue);
      b.find("#history-run canvas");
      b.await(20, d -> intAttr(b, "#history", "data-completed") == 7);
      // What ECharts holds: the counts and the run time's p95 of the planted minute.
      Number bars =
          (Number)
              b.script(
                  "const o = echarts.getInstanceByDom(document.getElementById('history-counts'))"
                      + ".getOption(); return o.series.flatMap(s => s.data).reduce((a, p) => a +"
                      + " p[1], 0);");
      assertEquals(10, bars.intValue(), "completed + failed + dead");
      Number p95 =
          (Number)
              b.script(
                  "const o = echarts.getInstanceByDom(document.getElementById('history-run'))"
                      + ".getOption(); const s = o.series.find(x => x.name === 'p95');"
                      + " return Math.max(...s.data.map(p => p[1] || 0));");
      assertEquals(400, p95.intValue());
      b.screenshot("history");
      b.click("#history button[data-range='24h']");
      b.await(20, d -> "24h".equals(b.find("#history").getAttribute("data-range")));
      assertTrue(intAttr(b, "#history", "data-points") >= 288, "24 h in steps of 5 minutes");
      assertEquals(7, intAttr(b, "#history", "data-completed"));
      b.click("#history button[data-range='7d']");
      b.await(20, d -> "7d".equals(b.find("#history").getAttribute("data-range")));
      assertTrue(intAttr(b, "#history", "data-points") >= 168, "7 days in steps of an hour");
      assertEquals(7, intAttr(b, "#history", "data-completed"));
    }
  }

  @Test
  void anAdminFindsADeadJobByItsPayloadReplaysItAndWatchesItComplete() throws Exception {
    String order = "order-" + UUID.randomUUID();
    long dead = plant(QUEUE, "dead", "{\"order\":\"" + order + "\",\"amount\":42}");
    long other = plant(QUEUE, "dead", "{\"order\":\"someone-else\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/jobs");
      b.find("#f-queue").sendKeys(QUEUE);
      b.find("#f-payload").sendKeys("{\"order\":\"" + order + "\"}");
      b.click("#f-search");
      b.find("tr[data-job-id='" + dead + "']");
      assertEquals(1, b.count("tr[data-job-id]"), "only the job whose payload matches");
      assertEquals(0, b.count("tr[data-job-id='" + other + "']"));
      b.screenshot("jobs");

      b.find("tr[data-job-id='" + dead + "'] a[href='#/job/" + dead + "']").click();
      b.find("#job-state[data-state=dead]");
      assertTrue(b.find("#payload").getText().contains("\"amount\": 42"), "pretty-printed");
      assertTrue(b.count("#timeline li.error") >= 1, "the error is on the timeline");
      b.screenshot("job-dead");

      b.click("button[data-action=replay]");
      b.find("#job-state[data-state=completed]");
      assertEquals("completed", state(dead));
      b.screenshot("job-completed");
    }
  }

  @Test
  void anAdminPausesAQueueAndResumesItFromThePage() throws Exception {
    plant(PAUSE_QUEUE, "scheduled", "{\"order\":\"later\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/queue/" + PAUSE_QUEUE);
      b.find("#queue-state .state.active");
      b.click("button[data-action=pause]");
      b.find("#queue-state .state.paused");
      assertTrue(paused(PAUSE_QUEUE), "pgbus.queue_pause has the queue");
      b.screenshot("queue-paused");

      b.click("button[data-action=resume]");
      b.find("#queue-state .state.active");
      assertTrue(!paused(PAUSE_QUEUE), "the pause is gone");
      b.open(console("admin", "admin-secret") + "#/queue/" + PAUSE_QUEUE + "?state=scheduled");
      b.find("#state-tabs a.active[data-state=scheduled]");
      b.find("tr[data-job-id]");
      b.find("button[data-action=bulk-retry]");
      b.find("button[data-action=bulk-cancel]");
      b.screenshot("queue");
    }
  }

  @Test
  void aViewerSeesNoActionButtonsAndTheApiRefusesTheirPost() throws Exception {
    long dead = plant(QUEUE, "dead", "{\"order\":\"viewer-sees\"}");
    plant(PAUSE_QUEUE, "scheduled", "{\"order\":\"later\"}");
    try (Browser b = new Browser()) {
      String console = console("viewer", "viewer-secret");
      b.open(console);
      b.find("body[data-role=viewer][data-page=overview] #depth-chart canvas");
      b.open(console + "#/job/" + dead);
      b.find("#job-state[data-state=dead]");
      assertTrue(b.find("#payload").getText().contains("masked"), "payloads are masked");
      assertEquals(0, b.count("button.act"), "no action on the job page");
      b.screenshot("viewer-job");
      b.open(console + "#/queue/" + PAUSE_QUEUE + "?state=scheduled");
      b.find("#queue-state .state");
      b.find("tr[data-job-id]");
      assertEquals(0, b.count("button.act"), "no pause, no bulk action");
      assertTrue(!b.find("#view").getText().contains("null"), "no trace of the missing buttons");
      b.screenshot("viewer-queue");

      // The page's own session, with a valid CSRF token: the API still says no.
      @SuppressWarnings("unchecked")
      Map<String, Object> r =
          (Map<String, Object>)
              b.asyncScript(
                  "const done = arguments[arguments.length - 1];"
                      + "(async () => {"
                      + " const api = location.origin + arguments[0];"
                      + " const t = (await (await fetch(api + 'csrf')).json()).token;"
                      + " const replay = await fetch(api + 'jobs/' + arguments[1] + '/replay',"
                      + "   {method: 'POST', headers: {'X-Pgbus-CSRF': t}});"
                      + " const pause = await fetch(api + 'queues/"
                      + PAUSE_QUEUE
                      + "/pause',"
                      + "   {method: 'POST', headers: {'X-Pgbus-CSRF': t}});"
                      + " done({replay: replay.status, pause: pause.status});"
                      + "})().catch(e => done({error: String(e)}));",
                  url.getPath() + "api/pgbus/admin/",
                  String.valueOf(dead));
      assertEquals(403L, ((Number) r.get("replay")).longValue(), String.valueOf(r));
      assertEquals(403L, ((Number) r.get("pause")).longValue(), String.valueOf(r));
      assertEquals("dead", state(dead));
      assertTrue(!paused(PAUSE_QUEUE));
    }
  }

  @Test
  void aHiddenTabSendsNoRequestAndRefreshesAgainWhenShown() throws Exception {
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret"));
      b.find("body[data-page=overview] #depth-chart canvas");
      // pgbus.console.refresh=1s: a visible page refreshes every second.
      String first = b.find("body").getAttribute("data-refreshed-at");
      b.await(
          10, d -> !String.valueOf(first).equals(b.find("body").getAttribute("data-refreshed-at")));
      // Headless Chromium is always "visible": tell the page its tab went to the background.
      b.script(
          "Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
              + "document.dispatchEvent(new Event('visibilitychange'));"
              + "performance.clearResourceTimings();");
      long before = System.nanoTime();
      Await.until(
          "three refresh periods pass",
          Duration.ofSeconds(10),
          () -> System.nanoTime() - before > Duration.ofMillis(3500).toNanos());
      Number requests =
          (Number)
              b.script(
                  "return performance.getEntriesByType('resource')"
                      + ".filter(e => e.name.includes('/api/pgbus/admin/')).length;");
      assertEquals(0L, requests.longValue(), "a hidden tab asks the API nothing");

      String hidden = b.find("body").getAttribute("data-refreshed-at");
      b.script(
          "Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true});"
              + "document.dispatchEvent(new Event('visibilitychange'));");
      b.await(
          5, d -> !String.valueOf(hidden).equals(b.find("body").getAttribute("data-refreshed-at")));
    }
  }

  @Test
  void theCronsAndFleetPagesShowTheCronAndTheDoctor() throws Exception {
    try (Browser b = new Browser()) {
      String console = console("admin", "admin-secret");
      b.open(console + "#/crons");
      assertTrue(b.find("#crons").getText().contains("nightly"));
      b.screenshot("crons");
      // The configured cron is a schedule: an admin pauses, triggers and resumes it.
      String row = "tr[data-schedule=nightly] ";
      b.find(row + ".state.active");
      b.click(row + "button[data-action=pause]");
      b.find(row + ".state.paused");
      assertTrue(
          count("SELECT count(*) FROM pgbus.schedule WHERE name = 'nightly' AND paused") == 1);
      b.click(row + "button[data-action=trigger]");
      b.await(10, d -> b.find("#flash").getText().contains("enqueued"));
      assertTrue(count("SELECT count(*) FROM pgbus.job WHERE queue = 'it_console_cron'") >= 1);
      b.click(row + "button[data-action=resume]");
      b.find(row + ".state.active");
      assertTrue(
          count("SELECT count(*) FROM pgbus.schedule WHERE name = 'nightly' AND paused") == 0);
      // Its history: the pause, the trigger and the resume, by the admin.
      b.click(row + "button[data-action=history]");
      b.await(10, d -> b.find("#schedule-history").getText().contains("trigger"));
      assertTrue(b.find("#schedule-history").getText().contains("pause"));
      assertTrue(b.find("#schedule-history").getText().contains("admin"));
      b.screenshot("schedules");
      b.open(console + "#/fleet");
      b.find("#doctor-report");
      b.await(20, d -> !b.find("#leader").getText().isBlank());
      // pgbus.node: this JVM's row, with its capsule and queue.
      b.await(20, d -> b.find("#nodes").getText().contains("console (" + QUEUE));
      b.screenshot("fleet");
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static int intAttr(Browser b, String css, String attr) {
    String v = b.find(css).getAttribute(attr);
    return v == null ? 0 : Integer.parseInt(v);
  }

  private static Connection db() throws Exception {
    return DriverManager.getConnection(
        "jdbc:postgresql://"
            + System.getProperty("pgbus.it.db.host")
            + ":"
            + System.getProperty("pgbus.it.db.port")
            + "/"
            + System.getProperty("pgbus.it.db.name")
            // The test's own SQL: not recorded by a hostile public (-Phostile-public).
            + "?ApplicationName=pgbus-test-helper",
        System.getProperty("pgbus.it.db.user"),
        System.getProperty("pgbus.it.db.password"));
  }

  /** A job in the given state, written with SQL; a dead one carries an error. */
  private static long plant(String queue, String state, String payload) throws Exception {
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement(
                """
                INSERT INTO pgbus.job (queue, state, payload, attempt, max_attempts, run_at,
                                       attempted_at, finalized_at, errors)
                VALUES (?, ?::pgbus.job_state, ?::jsonb, 3, 3,
                        CASE WHEN ? = 'scheduled' THEN now() + interval '1 hour' ELSE now() END,
                        CASE WHEN ? = 'scheduled' THEN NULL ELSE now() END,
                        CASE WHEN ? IN ('completed', 'dead', 'cancelled') THEN now() END,
                        CASE WHEN ? = 'dead' THEN jsonb_build_array(jsonb_build_object(
                          'attempt', 3, 'at', now(),
                          'error', 'java.io.IOException: the payment service said no'))
                        ELSE '[]'::jsonb END)
                RETURNING id
                """)) {
      ps.setString(1, queue);
      ps.setString(2, state);
      ps.setString(3, payload);
      for (int i = 4; i <= 7; i++) {
        ps.setString(i, state);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static String state(long id) throws Exception {
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement("SELECT state::text FROM pgbus.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static long count(String sql) throws Exception {
    try (Connection c = db();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static boolean paused(String queue) throws Exception {
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement("SELECT count(*) FROM pgbus.queue_pause WHERE queue = ?")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) > 0;
      }
    }
  }
}

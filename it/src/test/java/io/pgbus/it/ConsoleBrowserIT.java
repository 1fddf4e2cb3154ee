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
  private static final String ECHARTS = "lib/echarts-5.3.1.min.js";
  private static final String SLOW_QUEUE = "it_console_slow";
  private static final String MANY_QUEUE = "it_console_many";

  @Deployment(testable = false)
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "console",
                "pgbus.capsules=console",
                "pgbus.capsule.console.queues=" + QUEUE + "," + SLOW_QUEUE,
                "pgbus.capsule.console.concurrency=2",
                "pgbus.crons=nightly",
                "pgbus.cron.nightly.schedule=0 3 * * *",
                "pgbus.cron.nightly.queue=it_console_cron",
                "pgbus.console.refresh=1s")
            .addClasses(
                ItRestApplication.class,
                ItAdmin.class,
                ConsoleOrder.class,
                ConsoleOrderHandler.class,
                ConsoleSlowHandler.class)
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
    for (String path : List.of("pgbus/", "pgbus/app.js", "pgbus/" + ECHARTS, "pgbus")) {
      assertEquals(401, Http.get(base + path).status(), path);
    }
    // The WebJar is copied into the console jar, not bundled: nothing at the container's /webjars.
    assertEquals(404, Http.get(base + "webjars/echarts/5.3.1/dist/echarts.min.js").status());
    assertEquals(200, Http.get(base + "pgbus/" + ECHARTS, "viewer", "viewer-secret").status());
    Http.Response page = Http.get(base + "pgbus/", "viewer", "viewer-secret");
    assertTrue(page.headers().firstValue("Content-Security-Policy").orElse("").contains("'self'"));
    assertEquals(
        403,
        Http.get(base + "pgbus/", "someone", "someone-secret").status(),
        "a user without role");
  }

  @Test
  void staticFilesGoOutGzippedAndAreCachedByVersion() throws Exception {
    String base = Http.root(url) + url.getPath() + "pgbus/";
    Http.Response lib =
        Http.request("GET", base + ECHARTS, "viewer", "viewer-secret", "Accept-Encoding", "gzip");
    assertEquals(200, lib.status());
    assertEquals("gzip", lib.headers().firstValue("Content-Encoding").orElse(""));
    assertTrue(
        lib.headers().firstValue("Cache-Control").orElse("").contains("max-age=31536000"),
        "the versioned chart library is kept a year");
    // Content-Length when the server sets it; a chunked answer (Liberty) is measured by its body,
    // which the client does not inflate.
    long gzipped =
        lib.headers()
            .firstValue("Content-Length")
            .map(Long::parseLong)
            .orElse((long) lib.body().length());
    assertTrue(gzipped > 0 && gzipped < 400_000, "gzipped: " + gzipped + " bytes");
    // The page and the modules revalidate: the second load answers 304 without a body.
    for (String file : List.of("", "app.js", "core.js", "console.css")) {
      Http.Response first = Http.get(base + file, "viewer", "viewer-secret");
      String etag = first.headers().firstValue("ETag").orElseThrow();
      assertTrue(first.headers().firstValue("Cache-Control").orElse("").contains("no-cache"));
      Http.Response again =
          Http.request("GET", base + file, "viewer", "viewer-secret", "If-None-Match", etag);
      assertEquals(304, again.status(), file);
      assertEquals("", again.body(), file);
    }
    assertTrue(
        Http.get(base, "viewer", "viewer-secret").body().contains(ECHARTS),
        "the page loads the chart library by its versioned name");

    // The overview loaded twice in one browser: what went over the wire, console files only.
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret"));
      b.find("body[data-page=overview] #depth-chart canvas");
      List<?> first = transfer(b);
      b.script("window.pgbusFirstLoad = true; location.reload();");
      b.await(
          20,
          d ->
              b.script("return window.pgbusFirstLoad === undefined;").equals(Boolean.TRUE)
                  && b.count("body[data-page=overview] #depth-chart canvas") == 1);
      List<?> second = transfer(b);
      System.out.println(
          "console transfer on "
              + TestServer.current()
              + ": first load "
              + first
              + ", second load "
              + second
              + " [requests sent, bytes transferred, files]");
      long firstBytes = ((Number) first.get(1)).longValue();
      long secondBytes = ((Number) second.get(1)).longValue();
      assertTrue(secondBytes * 10 < firstBytes, "a second load: " + second + " after " + first);
    }
  }

  /** [requests sent, bytes transferred, files] of the page and its files (not the API's). */
  private static List<?> transfer(Browser b) {
    return (List<?>)
        b.script(
            "const all = [performance.getEntriesByType('navigation')[0],"
                + " ...performance.getEntriesByType('resource')]"
                + ".filter(e => e && !e.name.includes('/api/') && !e.name.endsWith('/session'));"
                + "return [all.filter(e => e.transferSize > 0).length,"
                + " all.reduce((n, e) => n + e.transferSize, 0), all.length];");
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
  void aQueueOfThousandsOfWaitingJobsShowsItsEstimateMarkedAsOne() throws Exception {
    // Past JobAdmin.COUNT_CAP (1,000) a live count is the planner's estimate (V58), not a count.
    execute(
        "INSERT INTO pgbus.job (queue, state, payload, run_at) SELECT ?, 'scheduled', '{}',"
            + " now() + interval '1 day' FROM generate_series(1, 3000)",
        MANY_QUEUE);
    execute("ANALYZE pgbus.job");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret"));
      String row = "tr[data-queue=" + MANY_QUEUE + "] td.num";
      String scheduled =
          (String)
              b.await(
                  20,
                  d ->
                      b.script(
                          "const c = document.querySelectorAll(arguments[0]);"
                              + " return c.length ? c[0].textContent + '|' + (c[0].title || '')"
                              + " : null;",
                          row));
      String[] cell = scheduled.split("\\|", -1);
      assertTrue(cell[0].startsWith("≈ "), "the scheduled count is marked an estimate: " + cell[0]);
      long n = Long.parseLong(cell[0].substring(2).replace(",", ""));
      assertTrue(n >= 2_700 && n <= 3_300, "the estimate is within 10% of 3,000: " + n);
      assertEquals("estimated from the table statistics", cell[1]);
      Object available =
          b.script("return document.querySelectorAll(arguments[0])[1].textContent;", row);
      assertEquals("0", available, "a count under the cap is exact and unmarked");
      // The depth chart names the deepest queues first and sums the rest past twelve.
      Object bars =
          b.script(
              "return echarts.getInstanceByDom(document.getElementById('depth-chart'))"
                  + ".getOption().yAxis[0].data;");
      List<?> names = (List<?>) bars;
      assertEquals(MANY_QUEUE, names.get(0), "the deepest queue first: " + names);
      assertTrue(
          names.size() <= 13, "at most 12 queues by name and one bar for the rest: " + names);
      b.screenshot("overview-estimate");
    } finally {
      execute("DELETE FROM pgbus.job WHERE queue = ?", MANY_QUEUE);
    }
  }

  /** The test's own statement, its parameters bound as strings. */
  private static void execute(String sql, String... args) throws Exception {
    try (Connection c = db();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setString(i + 1, args[i]);
      }
      ps.execute();
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

      // Died at: the dead job shows when it ended, in the browser's zone with its offset.
      assertTrue(b.find("#view").getText().contains("died at"));
      assertTrue(
          b.find("#view")
              .getText()
              .matches("(?s).*\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d [+-]\\d\\d:\\d\\d.*"),
          "times carry their offset");
      assertTrue(b.find("#zone").getText().startsWith("times in "));

      b.click("button[data-action=replay]");
      assertTrue(b.find("#confirm-text").getText().contains("fresh budget of 3 attempts"));
      b.click("#confirm-ok");
      b.find("#job-state[data-state=completed]");
      assertEquals("completed", state(dead));
      // Replay is a fresh start: the first attempt of a new budget of 3, the 3 before it named.
      assertTrue(
          b.find("#job-attempt").getText().startsWith("1 of 3"), b.find("#job-attempt").getText());
      b.screenshot("job-completed");
    }
  }

  @Test
  void anAdminSelectsJobsFoundByTheirErrorAndActsOnThemAfterAConfirmationThatCountsThem()
      throws Exception {
    String marker = "Err" + UUID.randomUUID().toString().substring(0, 8);
    long a =
        plantError(
            QUEUE,
            marker + " on a\n\tat x.Y.z(Y.java:1)\n\tat x.Y.w(Y.java:2)\n\tat x.Y.v(Y.java:3)");
    long b2 = plantError(QUEUE, marker + " on b");
    long c = plantError(QUEUE, marker + " on c");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/jobs?state=dead&error=" + marker.toLowerCase());
      b.find("tr[data-job-id='" + c + "']");
      assertEquals(3, b.count("tr[data-job-id]"), "the three jobs whose error matches");

      // Two selected: the confirmation counts them, and its Cancel changes nothing.
      b.click("input.select-job[data-job-id='" + a + "']");
      b.click("input.select-job[data-job-id='" + b2 + "']");
      b.find("#selection-count[data-count='2']");
      b.click("button[data-action=selected-delete]");
      assertTrue(b.find("#confirm-text").getText().startsWith("Delete 2 jobs"));
      b.click("#confirm-cancel");
      assertEquals("dead", state(a));
      b.click("button[data-action=selected-replay]");
      assertTrue(b.find("#confirm-text").getText().startsWith("Replay 2 jobs"));
      b.screenshot("jobs-selection");
      b.click("#confirm-ok");
      b.await(20, d -> b.find("#flash").getText().contains("2 jobs changed"));
      assertEquals("dead", state(c), "not selected");
      assertTrue(!"dead".equals(state(a)) && !"dead".equals(state(b2)));
      assertEquals(
          2L,
          count(
              "SELECT count(*) FROM pgbus.audit WHERE action = 'replay' AND actor = 'admin' AND job_id IN ("
                  + a
                  + ","
                  + b2
                  + ")"));

      // Every job matching the search: the one left, counted before it changes.
      b.await(20, d -> b.count("tr[data-job-id]") == 1);
      b.find("tr[data-job-id='" + c + "']");
      b.click("button[data-action=matching-delete]");
      assertTrue(
          b.find("#confirm-text").getText().startsWith("Delete 1 job:"),
          b.find("#confirm-text").getText());
      b.click("#confirm-ok");
      b.find("#no-jobs");
      assertEquals(null, state(c));

      // A stack trace shows its first lines; the rest unfolds on a click.
      b.open(console("admin", "admin-secret") + "#/job/" + a);
      b.find("#timeline details.trace:not([open])");
      assertTrue(!b.find("#timeline").getText().contains("Y.java:3"), "folded");
      b.click("#timeline details.trace summary");
      b.await(10, d -> b.find("#timeline").getText().contains("Y.java:3"));
    }
  }

  @Test
  void anAdminCancelsARunningJobFromItsPageAfterAConfirmation() throws Exception {
    long running = enqueue(SLOW_QUEUE, "{\"order\":\"slow\"}");
    Await.until(
        "the slow job runs", Duration.ofSeconds(30), () -> "running".equals(state(running)));
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/queue/" + SLOW_QUEUE + "?state=running");
      b.find("tr[data-job-id='" + running + "'] button[data-action=cancel-running]");
      b.open(console("admin", "admin-secret") + "#/job/" + running);
      b.find("#job-state[data-state=running]");
      b.click("button[data-action=cancel]");
      assertTrue(b.find("#confirm-text").getText().contains("Cancel running job " + running));
      b.click("#confirm-ok");
      b.find("#job-state[data-state=cancelled]");
      assertEquals("cancelled", state(running));
      b.screenshot("job-cancelled-while-running");
    }
  }

  @Test
  void anAdminPausesAQueueAndResumesItFromThePage() throws Exception {
    plant(PAUSE_QUEUE, "scheduled", "{\"order\":\"later\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/queue/" + PAUSE_QUEUE);
      b.find("#queue-state .state.active");
      // No one-click pause: the dialog's Cancel leaves the queue running.
      b.click("button[data-action=pause]");
      b.click("#confirm-cancel");
      assertTrue(!paused(PAUSE_QUEUE), "a cancelled confirmation changes nothing");
      b.click("button[data-action=pause]");
      b.click("#confirm-ok");
      b.find("#queue-state .state.paused");
      assertTrue(paused(PAUSE_QUEUE), "pgbus.queue_pause has the queue");
      b.screenshot("queue-paused");

      b.click("button[data-action=resume]");
      b.find("#queue-state .state.active");
      assertTrue(!paused(PAUSE_QUEUE), "the pause is gone");
      b.open(console("admin", "admin-secret") + "#/queue/" + PAUSE_QUEUE + "?state=scheduled");
      b.find("#state-tabs a.active[data-state=scheduled]");
      b.find("tr[data-job-id]");
      b.find("button[data-action=matching-retry]");
      b.find("button[data-action=matching-cancel]");
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
      assertTrue(
          !b.find("#view").getText().contains("null"),
          "no trace of the missing buttons: " + b.find("#view").getText());
      b.screenshot("viewer-queue");

      // The page's own session, with a valid CSRF token: the API still says no.
      assertEquals(403L, postFromThePage(b, "jobs/" + dead + "/replay"));
      assertEquals(403L, postFromThePage(b, "queues/" + PAUSE_QUEUE + "/pause"));
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
  void aViewerSeesWhyAJobExpiredAndTheSchedulesOverlapPolicy() throws Exception {
    long expired = plant(QUEUE, "cancelled", "{\"order\":\"too-late\"}");
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement(
                // As the leader's expiry leaves it (JobStore.EXPIRE).
                "UPDATE pgbus.job SET attempt = 0, start_by = '2026-01-02T03:04:05Z',"
                    + " errors = jsonb_build_array(jsonb_build_object('attempt', 0, 'at', now(),"
                    + " 'error', 'expired: not started by 2026-01-02T03:04:05.000Z'))"
                    + " WHERE id = ?")) {
      ps.setLong(1, expired);
      assertEquals(1, ps.executeUpdate());
    }
    try (Browser b = new Browser()) {
      String console = console("viewer", "viewer-secret");
      b.open(console + "#/job/" + expired);
      b.find("#job-state[data-state=cancelled]");
      b.find("#job-start-by");
      // pgbus's own reason, shown although the viewer's error texts are masked.
      assertTrue(
          b.find("#job-expired").getText().contains("not started by 2026-01-02T03:04:05.000Z"),
          b.find("#job-expired").getText());
      assertTrue(
          b.find("#timeline").getText().contains("Finished: cancelled, expired"),
          b.find("#timeline").getText());
      b.screenshot("expired-job");
      b.open(console + "#/crons");
      assertEquals(
          "allow",
          b.find("tr[data-schedule=nightly] td[data-overlap]").getAttribute("data-overlap"));
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
      b.click("#confirm-ok");
      b.find(row + ".state.paused");
      assertTrue(
          count("SELECT count(*) FROM pgbus.schedule WHERE name = 'nightly' AND paused") == 1);
      b.click(row + "button[data-action=trigger]");
      b.click("#confirm-ok");
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
      // The doctor as a page: a row per check with its badge, not raw JSON.
      b.find("#doctor-report #doctor-checks tr[data-check] .state");
      assertTrue(!b.find("#doctor-report").getText().contains("{\""), "no raw JSON");
      b.await(20, d -> !b.find("#leader").getText().isBlank());
      // pgbus.node: this JVM's row, with its capsule and queue.
      b.await(20, d -> b.find("#nodes").getText().contains("console (" + QUEUE));
      // The liveness badge sits inside its cell: the row keeps the table's column count.
      assertEquals(
          8L,
          ((Number) b.script("return document.querySelector('#nodes tbody tr').cells.length;"))
              .longValue());
      b.find("#nodes td.badge-cell > span.state");
      b.screenshot("fleet");
    }
  }

  @Test
  void anAdminFindsJobsByTheirHandlerAndABadHandlerIsNamed() throws Exception {
    long ordered = plant(QUEUE, "dead", "{\"order\":\"by-handler\"}");
    long slow = plant(SLOW_QUEUE, "dead", "{\"order\":\"slow-handler\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/jobs");
      // The field offers this application's handlers.
      b.await(10, d -> b.count("#handlers option[value=ConsoleOrderHandler]") == 1);
      b.find("#f-handler").sendKeys("ConsoleOrderHandler");
      b.find("#f-state").sendKeys("dead");
      b.click("#f-search");
      b.find("tr[data-job-id='" + ordered + "']");
      assertEquals(0, b.count("tr[data-job-id='" + slow + "']"), "another handler's job");
      b.screenshot("jobs-by-handler");
      b.open(console("admin", "admin-secret") + "#/jobs?handler=NoSuchHandler");
      b.await(10, d -> b.find("#flash").getText().contains("NoSuchHandler"));
      assertTrue(b.find("#flash").getText().contains("ConsoleOrderHandler"), "names the fix");
    }
    String api = Http.root(url) + url.getPath() + "api/pgbus/admin/";
    Http.Response bad = Http.get(api + "jobs?handler=a%20b", "admin", "admin-secret");
    assertEquals(400, bad.status());
    assertTrue(bad.body().contains("\"field\":\"handler\""), bad.body());
    Http.Response both =
        Http.get(
            api + "jobs?handler=io.pgbus.it.ConsoleSlowHandler&state=dead",
            "viewer",
            "viewer-secret");
    assertTrue(both.body().contains("\"" + slow + "\""), both.body());
    assertTrue(!both.body().contains("\"" + ordered + "\""), both.body());
  }

  @Test
  void anAdminChangesAQueuesLimitsLiveAfterAConfirmationAndTheChangeIsAudited() throws Exception {
    String queue = "it_console_limit_" + UUID.randomUUID().toString().substring(0, 8);
    plant(queue, "scheduled", "{\"order\":\"limited\"}");
    try (Browser b = new Browser()) {
      b.open(console("admin", "admin-secret") + "#/queue/" + queue);
      b.find("#limits-current");
      b.await(10, d -> b.find("#limits-current").getText().equals("none"));
      b.find("#l-globalConcurrency").sendKeys("3");
      b.find("#l-rateLimit").sendKeys("10");
      b.find("#l-rateWindowMs").sendKeys("60000");
      b.click("button[data-action=limit]");
      String text = b.find("#confirm-text").getText();
      assertTrue(text.contains("none → global 3, per key 1, 10 per 60000 ms"), text);
      b.click("#confirm-cancel");
      assertEquals(
          0L, count("SELECT count(*) FROM pgbus.queue_limit WHERE queue = '" + queue + "'"));
      b.click("button[data-action=limit]");
      b.click("#confirm-ok");
      b.await(10, d -> b.find("#limits-current").getText().startsWith("global 3"));
      assertEquals(
          3L,
          count("SELECT global_concurrency FROM pgbus.queue_limit WHERE queue = '" + queue + "'"));
      // Raised, and the rate limit dropped: a second audited change.
      b.find("#l-globalConcurrency").clear();
      b.find("#l-globalConcurrency").sendKeys("5");
      b.find("#l-rateLimit").clear();
      b.find("#l-rateWindowMs").clear();
      b.click("button[data-action=limit]");
      assertTrue(
          b.find("#confirm-text").getText().contains("→ global 5, per key 1"),
          b.find("#confirm-text").getText());
      b.click("#confirm-ok");
      b.await(10, d -> b.find("#limits-current").getText().equals("global 5, per key 1"));
      b.await(10, d -> b.count("#limits-history tbody tr") == 2);
      b.await(10, d -> b.find("#limits-history tbody tr").getText().contains("admin"));
      assertEquals(
          2L,
          count(
              "SELECT count(*) FROM pgbus.audit WHERE action = 'limit' AND actor = 'admin'"
                  + " AND queue = '"
                  + queue
                  + "' AND detail -> 'before' IS NOT NULL AND detail -> 'after' IS NOT NULL"));
      b.screenshot("queue-limits");
    }
    // A viewer sees the limits and their history, and nothing to change them with.
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret") + "#/queue/" + queue);
      b.await(10, d -> b.find("#limits-current").getText().startsWith("global 5"));
      b.await(10, d -> b.count("#limits-history tbody tr") == 2);
      assertEquals(0, b.count("#limits-form"), "no form for a viewer");
      assertEquals(0, b.count("button.act"));
      assertEquals(403L, postFromThePage(b, "queues/" + queue + "/limit?globalConcurrency=1"));
    }
    assertEquals(
        5L,
        count("SELECT global_concurrency FROM pgbus.queue_limit WHERE queue = '" + queue + "'"));
    try (Connection c = db();
        PreparedStatement ps = c.prepareStatement("SELECT pgbus.queue_limit_clear(?)")) {
      ps.setString(1, queue);
      ps.executeQuery().close();
    }
  }

  @Test
  void aJobShowsItsParentsChildrenAndBatchAndTheBatchPageItsJobs() throws Exception {
    long batch =
        count(
            "INSERT INTO pgbus.batch (size, pending, completed, callback_queue, callback_payload)"
                + " VALUES (2, 1, 1, 'it_console_done', '{\"report\":\"q4\"}') RETURNING id");
    // A queue no capsule reads: the jobs stay as planted.
    String queue = "it_console_links";
    long parent = plant(queue, "completed", "{\"order\":\"parent\"}");
    long sibling = plant(queue, "scheduled", "{\"order\":\"sibling\"}");
    long child = plant(queue, "scheduled", "{\"order\":\"child\"}");
    count(
        "WITH u AS (UPDATE pgbus.job SET batch_id = "
            + batch
            + " WHERE id IN ("
            + parent
            + ","
            + sibling
            + ") RETURNING 1) SELECT count(*) FROM u");
    count(
        "WITH e AS (INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state)"
            + " VALUES ("
            + parent
            + ","
            + child
            + ", 'hold', 'completed') RETURNING 1) SELECT count(*) FROM e");
    try (Browser b = new Browser()) {
      String console = console("viewer", "viewer-secret");
      b.open(console + "#/job/" + child);
      b.find("#job-parents li[data-job-id='" + parent + "'] .state.completed");
      b.open(console + "#/job/" + parent);
      // Its state as it is now (an edge already completed lets the leader make it available).
      b.find("#job-children li[data-job-id='" + child + "'] .state");
      assertTrue(b.find("#job-children").getText().contains("edge completed, on failure: hold"));
      b.screenshot("job-edges");
      b.click("#job-batch");
      b.find("body[data-page=batch] #batch-jobs tr[data-job-id='" + sibling + "']");
      assertEquals(2, b.count("#batch-jobs tbody tr"));
      assertTrue(
          b.find("#batch-counts").getText().contains("1 completed"),
          b.find("#batch-counts").getText());
      assertTrue(b.find("#batch-facts").getText().contains("masked"), "a viewer's payload");
      b.screenshot("batch");
    }
    Http.Response gone =
        Http.get(
            Http.root(url) + url.getPath() + "api/pgbus/admin/batches/" + (batch + 1000),
            "admin",
            "admin-secret");
    assertEquals(404, gone.status());
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * The status of a POST to the admin API {@code path} sent by the page itself, in the browser's
   * session, with a valid CSRF token from {@code GET csrf}.
   */
  private long postFromThePage(Browser b, String path) {
    @SuppressWarnings("unchecked")
    Map<String, Object> r =
        (Map<String, Object>)
            b.asyncScript(
                "const done = arguments[arguments.length - 1];"
                    + "(async () => {"
                    + " const api = location.origin + arguments[0];"
                    + " const t = (await (await fetch(api + 'csrf')).json()).token;"
                    + " const res = await fetch(api + arguments[1],"
                    + "   {method: 'POST', headers: {'X-Pgbus-CSRF': t}});"
                    + " done({status: res.status});"
                    + "})().catch(e => done({error: String(e)}));",
                url.getPath() + "api/pgbus/admin/",
                path);
    assertTrue(r.get("status") instanceof Number, String.valueOf(r));
    return ((Number) r.get("status")).longValue();
  }

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

  /** A dead job of {@code queue} whose latest error is {@code error}. */
  private static long plantError(String queue, String error) throws Exception {
    long id = plant(queue, "dead", "{\"order\":\"err\"}");
    try (Connection c = db();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE pgbus.job SET errors = jsonb_build_array(jsonb_build_object("
                    + "'attempt', 3, 'at', now(), 'error', ?::text)) WHERE id = ?")) {
      ps.setString(1, error);
      ps.setLong(2, id);
      ps.executeUpdate();
    }
    return id;
  }

  /** A job enqueued as an application would, with pgbus.enqueue: its queue is woken. */
  private static long enqueue(String queue, String payload) throws Exception {
    try (Connection c = db();
        PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?, ?::jsonb)")) {
      ps.setString(1, queue);
      ps.setString(2, payload);
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

  @Test
  void theJobPageShowsWhyTheJobWaitsAtTheTop() throws Exception {
    long later = plant(QUEUE, "scheduled", "{\"order\":\"explained\"}");
    try (Browser b = new Browser()) {
      b.open(console("viewer", "viewer-secret") + "#/job/" + later);
      b.find("#job-state[data-state=scheduled]");
      var reason = b.find("#job-reasons li.reason[data-code=due_later]");
      assertTrue(reason.getText().contains("is not due until"), reason.getText());
      assertTrue(reason.getText().contains("Resolves by itself by"), reason.getText());
      b.screenshot("job-explained");
    }
  }
}

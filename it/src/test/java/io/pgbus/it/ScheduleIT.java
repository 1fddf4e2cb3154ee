package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.AuditEntry;
import io.pgbus.InvalidScheduleException;
import io.pgbus.ScheduleDefinition;
import io.pgbus.Schedules;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Schedules on the server: the injected {@link Schedules} joins the caller's JTA transaction (a
 * rollback leaves nothing, a commit runs), bad input is refused with nothing written, and the admin
 * endpoints list, create, act and enforce roles and CSRF. Runs go to queues no capsule reads, so
 * they stay countable.
 */
@ExtendWith(ArquillianExtension.class)
class ScheduleIT {

  @Deployment
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "schedules",
                "pgbus.capsules=sched",
                "pgbus.capsule.sched.queues=it_sched_read",
                "pgbus.capsule.sched.concurrency=1",
                "pgbus.poll-ceiling=1s")
            .addClasses(ItRestApplication.class, ItAdmin.class, Http.class);
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @Inject Schedules schedules;

  @Resource(lookup = "java:comp/UserTransaction")
  UserTransaction tx;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  private static String unique(String prefix) {
    return prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  }

  private long count(String sql, Object... params) throws Exception {
    return Sql.count(ds, sql, params);
  }

  private void awaitCount(String what, String sql, long atLeast, Object... params)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    long n;
    while ((n = count(sql, params)) < atLeast) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what + ": " + n + " < " + atLeast);
      }
      Thread.sleep(100); // polling a condition, bounded by the deadline
    }
  }

  @Test
  void aScheduleMadeInARolledBackTransactionLeavesNothingAndACommittedOneRuns() throws Exception {
    String name = unique("it-rb-");
    String queue = unique("it_sched_");
    tx.begin();
    schedules.create(ScheduleDefinition.of(name, "* * * * * *", queue));
    tx.rollback();
    assertEquals(0, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
    assertEquals(0, count("SELECT count(*) FROM pgbus.audit WHERE schedule = ?", name));

    tx.begin();
    InvalidScheduleException bad =
        assertThrows(
            InvalidScheduleException.class,
            () -> schedules.create(ScheduleDefinition.of(name, "61 * * * *", queue)));
    assertTrue(bad.getMessage().contains("invalid cron schedule '61 * * * *'"), bad.getMessage());
    // The transaction is still good: the refusal wrote nothing and broke nothing.
    schedules.create(
        ScheduleDefinition.of(name, "* * * * * *", queue).withPayloadJson("{\"n\":1}"));
    tx.commit();

    awaitCount("a run", "SELECT count(*) FROM pgbus.job WHERE queue = ?", 1, queue);
    assertEquals(
        count("SELECT count(*) FROM pgbus.job WHERE queue = ?", queue),
        count("SELECT count(DISTINCT unique_key) FROM pgbus.job WHERE queue = ?", queue));

    tx.begin();
    assertTrue(schedules.delete(name));
    tx.rollback();
    assertEquals(1, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
    // Audited with the change, in the caller's transaction: the rolled-back delete left none.
    assertEquals(
        List.of("schedule_create"),
        schedules.history(name, 10).stream().map(AuditEntry::action).toList());
    assertTrue(schedules.delete(name));
    assertEquals(0, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
    assertEquals(
        List.of("schedule_delete", "schedule_create"),
        schedules.history(name, 10).stream().map(AuditEntry::action).toList());
  }

  private String api() {
    return Http.root(url) + url.getPath() + "api/pgbus/admin/";
  }

  private String csrf(String user, String password) throws Exception {
    Http.Response r = Http.request("GET", api() + "csrf", user, password);
    assertEquals(200, r.status(), r.body());
    String token = r.cookie("pgbus-csrf");
    assertNotNull(token);
    return token;
  }

  private Http.Response post(String path, String json, String user, String password)
      throws Exception {
    String token = csrf(user, password);
    return Http.requestWithBody(
        "POST",
        api() + path,
        user,
        password,
        json,
        "X-Pgbus-CSRF",
        token,
        "Cookie",
        "pgbus-csrf=" + token);
  }

  @Test
  void theAdminApiListsCreatesAndActsOnSchedulesForAdminsOnly() throws Exception {
    String name = unique("it-api-");
    String queue = unique("it_sched_");
    String body =
        "{\"name\":\""
            + name
            + "\",\"cron\":\"0 3 * * *\",\"zone\":\"Europe/Berlin\",\"queue\":\""
            + queue
            + "\",\"payload\":{\"customer\":\"acme\"},\"misfire\":\"catch_up\",\"catchUpLimit\":3,"
            + "\"overlap\":\"skip\"}";

    Http.Response asViewer = post("schedules", body, "viewer", "viewer-secret");
    assertEquals(403, asViewer.status(), asViewer.body());
    Http.Response noCsrf =
        Http.requestWithBody("POST", api() + "schedules", "admin", "admin-secret", body);
    assertEquals(403, noCsrf.status(), noCsrf.body());
    Http.Response badZone =
        post("schedules", body.replace("Europe/Berlin", "Mars/Olympus"), "admin", "admin-secret");
    assertEquals(400, badZone.status(), badZone.body());
    assertTrue(badZone.body().contains("unknown time zone 'Mars/Olympus'"), badZone.body());
    assertEquals(0, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
    Http.Response badOverlap =
        post("schedules", body.replace("\"skip\"", "\"never\""), "admin", "admin-secret");
    assertEquals(400, badOverlap.status(), badOverlap.body());
    assertTrue(
        badOverlap.body().contains("unknown overlap 'never': use allow, skip, queue or"),
        badOverlap.body());

    Http.Response created = post("schedules", body, "admin", "admin-secret");
    assertEquals(201, created.status(), created.body());
    assertTrue(created.body().contains("\"misfire\":\"catch_up\""), created.body());
    assertTrue(created.body().contains("\"overlap\":\"skip\""), created.body());
    assertEquals(
        1, count("SELECT count(*) FROM pgbus.schedule WHERE name = ? AND overlap = 'skip'", name));

    Http.Response list = Http.request("GET", api() + "schedules", "viewer", "viewer-secret");
    assertEquals(200, list.status(), list.body());
    assertTrue(list.body().contains("\"name\":\"" + name + "\""), list.body());
    assertTrue(list.body().contains("\"nextRun\":\""), list.body());

    assertEquals(200, post("schedules/" + name + "/pause", "", "admin", "admin-secret").status());
    assertEquals(1, count("SELECT count(*) FROM pgbus.schedule WHERE name = ? AND paused", name));
    assertEquals(200, post("schedules/" + name + "/resume", "", "admin", "admin-secret").status());
    assertEquals(
        1, count("SELECT count(*) FROM pgbus.schedule WHERE name = ? AND NOT paused", name));

    Http.Response trigger = post("schedules/" + name + "/trigger", "", "admin", "admin-secret");
    assertEquals(200, trigger.status(), trigger.body());
    assertTrue(trigger.body().contains("\"jobId\":\""), trigger.body());
    assertEquals(1, count("SELECT count(*) FROM pgbus.job WHERE queue = ?", queue));

    Http.Response updated =
        post(
            "schedules/" + name,
            "{\"cron\":\"@hourly\",\"queue\":\"" + queue + "\"}",
            "admin",
            "admin-secret");
    assertEquals(200, updated.status(), updated.body());
    assertEquals("@hourly", Sql.value(ds, "SELECT cron FROM pgbus.schedule WHERE name = ?", name));
    Http.Response one = Http.request("GET", api() + "schedules/" + name, "viewer", "viewer-secret");
    assertEquals(200, one.status(), one.body());
    assertTrue(one.body().contains("\"history\""), one.body());
    assertTrue(one.body().contains("\"action\":\"schedule_trigger\""), one.body());
    assertEquals(
        5, count("SELECT count(*) FROM pgbus.audit WHERE schedule = ? AND actor = 'admin'", name));

    assertEquals(200, post("schedules/" + name + "/delete", "", "admin", "admin-secret").status());
    assertEquals(404, post("schedules/" + name + "/delete", "", "admin", "admin-secret").status());
    assertEquals(0, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
  }

  @Test
  void aBadRowWrittenBySqlIsListedMarkedAndDeletedThroughTheAdminApi() throws Exception {
    // What an older release or a superuser past the constraint could leave: an unknown zone. The
    // three statements run as one implicit transaction: the constraint is back even if one fails.
    String name = unique("it-bad-");
    Sql.execute(
        ds,
        "ALTER TABLE pgbus.schedule DROP CONSTRAINT schedule_zone_known_chk;"
            + " INSERT INTO pgbus.schedule (name, cron, zone, queue, payload, source, next_run_at)"
            + " VALUES ('"
            + name
            + "', '* * * * * *', 'Mars/Olympus', 'it_sched_bad', '{}', 'api', now());"
            + " ALTER TABLE pgbus.schedule ADD CONSTRAINT schedule_zone_known_chk"
            + " CHECK (pgbus.schedule_zone_valid(zone)) NOT VALID");

    Http.Response list = Http.request("GET", api() + "schedules", "viewer", "viewer-secret");
    assertEquals(200, list.status(), list.body());
    assertTrue(list.body().contains("\"name\":\"" + name + "\""), list.body());
    assertTrue(list.body().contains("\"error\":\"unreadable\""), list.body());
    assertTrue(list.body().contains("unknown time zone 'Mars/Olympus'"), list.body());
    Http.Response one = Http.request("GET", api() + "schedules/" + name, "viewer", "viewer-secret");
    assertEquals(200, one.status(), one.body());

    assertEquals(200, post("schedules/" + name + "/delete", "", "admin", "admin-secret").status());
    assertEquals(0, count("SELECT count(*) FROM pgbus.schedule WHERE name = ?", name));
  }
}

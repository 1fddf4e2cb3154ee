package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pgbus.engine.testing.PgBouncer;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * pgbus behind a real PgBouncer in transaction mode (issue #33), on both servers: the JTA
 * datasource {@code jdbc/pgbusPooled} goes through a PgBouncer this test starts (Debian's package,
 * its own port, ini and userlist; {@link PgBouncer}), without {@code prepareThreshold=0}; the
 * listener goes straight to the database ({@code pgbus.listener.url}). Jobs enqueued in JTA
 * transactions are claimed and completed, some retried, one rescued from a dead worker's lease by
 * the elected leader, a cron enqueues every second, the admin API (the console's reads) answers,
 * and through a listener kill and a PgBouncer restart no job is lost, none doubled, no handler's
 * run committed twice, and readiness ends UP with the listener delivering; then one
 * prepared-statement error on a pgbus statement makes readiness DOWN with the category {@code
 * pooler breaks prepared statements}. Skipped where PgBouncer is not installed.
 *
 * <p>What the PgBouncer restart found (issue #33), each fixed in the product: on Liberty every
 * engine loop kept its broken pooled connection in its thread's local transaction containment and
 * took another, until the pool was exhausted (J2CA0045E; the loops now move to a fresh thread), and
 * a dead idle connection failed its XA enlistment (XAER_RMERR; liberty-config validates pooled
 * connections, and PoolerGuard hands such a connection back); on both servers a job whose failure
 * record met a heuristic commit outcome waited for its 5-minute lease, and the leader's schedules
 * waited up to a minute after one failed round. The handler qualifies its table, as an application
 * behind a pooler should.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class PoolerIT {

  private static final int PORT = Integer.getInteger("pgbus.it.pooler.port", 16432);
  private static final String HOST = System.getProperty("pgbus.it.db.host", "127.0.0.1");
  private static final int DB_PORT = Integer.getInteger("pgbus.it.db.port", 5432);
  private static final String DB = System.getProperty("pgbus.it.db.name", "pgbus_it");

  private static PgBouncer pgb;

  @Deployment(testable = false)
  static WebArchive deployment() throws Exception {
    try (Connection c = direct();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE IF NOT EXISTS it_pooled_runs(job_id bigint NOT NULL, queue text NOT NULL,"
              + " attempt int NOT NULL, text text NOT NULL)");
      st.execute("TRUNCATE it_pooled_runs");
    }
    if (PgBouncer.available()) {
      // As many server connections as the datasource's 10 (operations.md: fewer can deadlock, a
      // job's transaction waiting for a second connection the pooler has no server for).
      pgb = PgBouncer.inFrontOf(HOST, DB_PORT, PORT).poolSize(10).start();
    }
    WebArchive war =
        PgbusWars.of(
                "pooler",
                "pgbus.datasource=" + TestServer.current().dataSource("jdbc/pgbusPooled"),
                "pgbus.listener.url=jdbc:postgresql://" + HOST + ":" + DB_PORT + "/" + DB,
                "pgbus.listener.user=postgres",
                "pgbus.capsules=pooled",
                "pgbus.capsule.pooled.queues=it_pooled,it_pooled_cron",
                "pgbus.capsule.pooled.concurrency=4",
                "pgbus.retry.base=200ms",
                "pgbus.retry.jitter=0",
                // Rescue and election within seconds, not minutes. The lease too: a claim whose
                // answer the PgBouncer restart cuts off may have committed on the server, and only
                // lease rescue gives its jobs back (the worker never saw them).
                "pgbus.lease=20s",
                "pgbus.heartbeat.ttl=6s",
                "pgbus.leader.ttl=8s",
                "pgbus.crons=pooled-pulse",
                "pgbus.cron.pooled-pulse.schedule=* * * * * *",
                "pgbus.cron.pooled-pulse.queue=it_pooled_cron",
                "pgbus.cron.pooled-pulse.payload={\"text\": \"pulse\", \"fail\": false}")
            .addClasses(
                PoolerEndpoint.class,
                PoolerHandler.class,
                ItRestApplication.class,
                ItAdmin.class,
                ItDoctor.class);
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @ArquillianResource URL url;

  @AfterAll
  static void stopPgBouncer() {
    if (pgb != null) {
      pgb.close();
    }
  }

  @Test
  void aWholeLifecycleThroughPgBouncerLosesNoJobDoublesNoneAndRunsNoHandlerTwice()
      throws Exception {
    assumeTrue(PgBouncer.available(), PgBouncer.MISSING);
    // The application's root, without its trailing slash.
    String root = Http.root(url) + url.getPath().replaceAll("/$", "");
    String ready = TestServer.current().health(url) + "/ready";
    Await.until(
        "readiness UP with the listener delivering",
        Duration.ofSeconds(90),
        () -> {
          Http.Response r;
          try {
            r = Http.get(ready);
          } catch (java.net.http.HttpTimeoutException e) {
            // The start migrates a fresh schema, and readiness reads it: on a loaded machine a
            // probe outlasted the client's 10 s while the migration held its locks.
            return false;
          }
          return r.status() == 200 && r.body().contains("\"delivering\"");
        });

    var ids = new ArrayList<Long>();
    ids.addAll(enqueue(root, "a", 50));
    ids.addAll(enqueue(root, "b", 50));
    long rescued = plantDeadWorkersJob();

    // A listener kill: the direct LISTEN connection's backend is terminated.
    long killed =
        count(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname ="
                + " current_database() AND application_name = 'pgbus-listener'");
    ids.addAll(enqueue(root, "c", 50));
    Await.until(
        "the listener delivering again",
        Duration.ofSeconds(30),
        () -> Http.get(ready).body().contains("\"delivering\""));

    // A PgBouncer restart while jobs run: every client and server connection drops.
    ids.addAll(enqueue(root, "d", 50));
    pgb.restart();
    ids.addAll(enqueueRetrying(root, "e", 50));

    ids.add(rescued);
    try {
      Await.until(
          "every job completed",
          Duration.ofSeconds(120),
          () -> countIn("completed", ids) == ids.size());
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; not completed: " + notCompleted(ids), e);
    }
    Await.until(
        "three cron runs completed",
        Duration.ofSeconds(30),
        () ->
            count(
                    "SELECT count(*) FROM pgbus.job_all WHERE queue = 'it_pooled_cron' AND state ="
                        + " 'completed'")
                >= 3);
    Http.Response queues = Http.get(root + "/api/pgbus/admin/queues", "admin", "admin-secret");
    Http.Response search =
        Http.get(
            root + "/api/pgbus/admin/jobs?queue=it_pooled&state=completed",
            "admin",
            "admin-secret");
    Http.Response doctor = Http.get(root + "/api/pgbus/doctor", "admin", "admin-secret");
    Http.Response finalReady = Http.get(ready);

    // At least this deployment's listener: in the full IT run another deployment on the same
    // server (and database) may still have its own, one per deployed pgbus runtime.
    assertTrue(killed >= 1, "listener connections terminated: " + killed);
    assertEquals(ids.size(), countIn("completed", ids), "jobs completed");
    assertEquals(0, countIn("dead", ids), "jobs dead");
    // One committed run per job: a second run of a completed job would have committed its row.
    assertEquals(
        0,
        count(
            "SELECT count(*) FROM (SELECT job_id FROM it_pooled_runs GROUP BY job_id"
                + " HAVING count(*) > 1) twice"),
        "jobs whose handler run committed twice");
    assertEquals(
        ids.size(),
        count("SELECT count(DISTINCT job_id) FROM it_pooled_runs WHERE queue = 'it_pooled'"),
        "jobs with a committed run");
    assertEquals(
        0,
        count(
            "SELECT count(*) FROM pgbus.job_all j WHERE j.queue = 'it_pooled_cron' AND j.state ="
                + " 'completed' AND (SELECT count(*) FROM it_pooled_runs r WHERE r.job_id = j.id)"
                + " <> 1"),
        "completed cron jobs without exactly one committed run");
    // 1 in 5 of each 50 failed its first attempt, and the rescued job runs its second; a job
    // whose completion the restart cut off runs again, so at least these.
    assertTrue(
        count("SELECT count(*) FROM it_pooled_runs WHERE queue = 'it_pooled' AND attempt >= 2")
            >= 5 * 10 + 1,
        "retried runs");
    assertEquals(
        1,
        count(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND"
                + " application_name = 'pgbus-listener'"),
        "connections named pgbus-listener (the direct one only)");
    assertEquals(200, queues.status(), queues.body());
    assertTrue(queues.body().contains("it_pooled"), queues.body());
    assertEquals(200, search.status(), search.body());
    assertEquals(200, doctor.status(), doctor.body());
    assertTrue(doctor.body().contains("transaction-mode pooler"), doctor.body());
    // pgbus's statements met no prepared-statement error in the whole run (the check's OK text).
    assertTrue(doctor.body().contains("none failed"), doctor.body());
    assertFalse(doctor.body().contains(PoolerGuardCategory.TEXT), doctor.body());
    assertEquals(200, finalReady.status(), finalReady.body());
    assertTrue(finalReady.body().contains("\"delivering\""), finalReady.body());

    // Readiness is wired to the guard: one prepared-statement error on a pgbus statement makes
    // it DOWN with the category. The pooler itself gives pgbus none any more (above), so a
    // trigger answers the enqueue's INSERT with what PgBouncer answers a lost S_n: SQLSTATE 26000.
    Http.Response tripped = tripTheGuard(root);
    Http.Response downReady = Http.get(ready);
    assertTrue(tripped.status() >= 500, tripped.status() + " " + tripped.body());
    assertEquals(503, downReady.status(), downReady.body());
    assertTrue(downReady.body().contains(PoolerGuardCategory.TEXT), downReady.body());
    System.out.println(
        "[pgbus-it] [measure] behind PgBouncer: "
            + ids.size()
            + " jobs completed once each through a listener kill and a PgBouncer restart");
  }

  /** An enqueue whose INSERT fails as a pooler's lost prepared statement does (26000). */
  private static Http.Response tripTheGuard(String root) throws Exception {
    try (Connection c = direct();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE OR REPLACE FUNCTION public.it_pooled_lost_statement() RETURNS trigger"
              + " LANGUAGE plpgsql SET search_path = pg_catalog AS $$ BEGIN RAISE EXCEPTION"
              + " 'prepared statement \"S_9\" does not exist' USING ERRCODE = '26000'; END $$");
      st.execute(
          "CREATE TRIGGER it_pooled_lost_statement BEFORE INSERT ON pgbus.job FOR EACH ROW WHEN"
              + " (NEW.payload->>'text' = 'lost-0') EXECUTE FUNCTION"
              + " public.it_pooled_lost_statement()");
    }
    try {
      return Http.post(root + "/api/pooler/enqueue?prefix=lost&n=1&failEvery=0");
    } finally {
      try (Connection c = direct();
          Statement st = c.createStatement()) {
        st.execute("DROP TRIGGER it_pooled_lost_statement ON pgbus.job");
        st.execute("DROP FUNCTION public.it_pooled_lost_statement()");
      }
    }
  }

  /** The category readiness and the doctor show (PoolerGuard.CATEGORY, not on this class path). */
  private static final class PoolerGuardCategory {
    static final String TEXT = "pooler breaks prepared statements";
  }

  private static List<Long> enqueue(String root, String prefix, int n) throws Exception {
    Http.Response r =
        Http.post(root + "/api/pooler/enqueue?prefix=" + prefix + "&n=" + n + "&failEvery=5");
    assertEquals(200, r.status(), r.body());
    var ids = new ArrayList<Long>();
    for (String id : r.body().strip().split(",")) {
      ids.add(Long.parseLong(id));
    }
    return ids;
  }

  /** Right after a restart the first requests may meet connections the pool has not dropped. */
  private static List<Long> enqueueRetrying(String root, String prefix, int n) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      Http.Response r =
          Http.post(root + "/api/pooler/enqueue?prefix=" + prefix + "&n=" + n + "&failEvery=5");
      if (r.status() == 200) {
        var ids = new ArrayList<Long>();
        for (String id : r.body().strip().split(",")) {
          ids.add(Long.parseLong(id));
        }
        return ids;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("enqueue after the PgBouncer restart: " + r.status() + r.body());
      }
      Thread.sleep(500);
    }
  }

  /** A job a dead worker held: running, its lease expired a minute ago; the leader rescues it. */
  private static long plantDeadWorkersJob() throws SQLException {
    try (Connection c = direct();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO pgbus.job(queue, payload, state, attempt, attempted_at,"
                    + " attempted_by, lease_expires_at) VALUES ('it_pooled',"
                    + " '{\"text\":\"rescued\",\"fail\":false}', 'running', 1,"
                    + " now() - interval '2 minutes', 'dead-worker', now() - interval '1 minute')"
                    + " RETURNING id");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** The jobs of {@code ids} not completed, with what a reader needs to tell why. */
  private static String notCompleted(List<Long> ids) throws SQLException {
    try (Connection c = direct();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT string_agg(format('%s %s attempt %s by %s lease %s errors %s', id, state,"
                    + " attempt, attempted_by, lease_expires_at - now(), errors), '; ')"
                    + " FROM pgbus.job WHERE id = ANY(?) AND state <> 'completed'")) {
      ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return String.valueOf(rs.getString(1));
      }
    }
  }

  private static long countIn(String state, List<Long> ids) throws SQLException {
    try (Connection c = direct();
        PreparedStatement ps =
            c.prepareStatement(
                // job_all: a job completed a minute ago has moved to pgbus.job_history (V33).
                "SELECT count(*) FROM pgbus.job_all WHERE state::text = ? AND id = ANY(?)")) {
      ps.setString(1, state);
      ps.setArray(2, c.createArrayOf("bigint", ids.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static long count(String sql) throws SQLException {
    try (Connection c = direct();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static Connection direct() throws SQLException {
    var props = new Properties();
    props.setProperty("user", System.getProperty("pgbus.it.db.user", "postgres"));
    props.setProperty("password", System.getProperty("pgbus.it.db.password", ""));
    props.setProperty("ApplicationName", "pgbus-test-helper");
    return DriverManager.getConnection(
        "jdbc:postgresql://" + HOST + ":" + DB_PORT + "/" + DB, props);
  }
}

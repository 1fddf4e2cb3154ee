package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import jakarta.annotation.Resource;
import java.net.URL;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Finished jobs in pgbus.job_history (V33) on the server: its leader creates the day partitions,
 * and the admin API reads, searches and explains a job that moved there.
 */
@ExtendWith(ArquillianExtension.class)
class JobHistoryIT {

  @Deployment
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "job-history",
                "pgbus.capsules=history",
                "pgbus.capsule.history.queues=it_history_read",
                "pgbus.capsule.history.concurrency=1")
            .addClasses(ItRestApplication.class, ItAdmin.class, Http.class);
    if (TestServer.current() == TestServer.WILDFLY) {
      war.setWebXML("wildfly/web-secured.xml").addAsWebInfResource("wildfly/jboss-web.xml");
    }
    return war;
  }

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  @Test
  void aJobMovedToTheHistoryIsReadSearchedAndExplainedByTheAdminApi() throws Exception {
    // The leader's first maintenance round creates today's partition (and two days ahead).
    Await.until(
        "the leader to create today's history partition",
        Duration.ofSeconds(60),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pg_class WHERE relname = 'job_history_p'"
                        + " || to_char(now() AT TIME ZONE 'UTC', 'YYYYMMDD')")
                == 1);
    String q = "it_history_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    String marker = UUID.randomUUID().toString();
    long id =
        ((Number)
                Sql.value(
                    ds,
                    """
                    INSERT INTO pgbus.job (queue, state, payload, attempt, finalized_at, result)
                    VALUES (?, 'completed', '{}', 1, now(), ?::jsonb) RETURNING id
                    """,
                    q,
                    "{\"receipt\":\"" + marker + "\"}"))
            .longValue();
    // The leader's move, as ArchiveStore.MOVE makes it (it waits a minute; the test does not).
    Sql.execute(
        ds,
        "WITH m AS (DELETE FROM pgbus.job WHERE id = ? RETURNING *)"
            + " INSERT INTO pgbus.job_history SELECT * FROM m",
        id);
    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM pgbus.job_history WHERE id = ?", id));

    String api = Http.root(url) + url.getPath() + "api/pgbus/admin/";
    Http.Response one = Http.request("GET", api + "jobs/" + id, "admin", "admin-secret");
    assertEquals(200, one.status(), one.body());
    assertTrue(one.body().contains(marker), one.body());
    Http.Response search =
        Http.request(
            "GET", api + "jobs?queue=" + q + "&state=completed", "viewer", "viewer-secret");
    assertEquals(200, search.status(), search.body());
    assertTrue(search.body().contains("\"id\":\"" + id + "\""), search.body());
    Http.Response explain =
        Http.request("GET", api + "jobs/" + id + "/explain", "viewer", "viewer-secret");
    assertEquals(200, explain.status(), explain.body());
    assertTrue(explain.body().contains("completed"), explain.body());
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.engine.Schema;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The deploy gate under {@code pgbus.deploy-check=fail} (issue #25): a build that has no handler
 * for a queue with waiting jobs, which no other engine reads, stays DOWN with the reason, so a
 * rolling platform stops the rollout; once the jobs are gone the gate, checked again, lets it
 * start.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class DeployGateIT {

  private static final String ORPHAN = "it_gate_orphan";

  @Deployment(testable = false)
  static WebArchive deployment() throws Exception {
    // Before the WAR deploys, so that its first gate sees it: a waiting job of a queue none of
    // the WAR's handlers reads (the schema may not exist yet on a fresh test database).
    Schema.migrate(helper());
    try (Connection c = helper().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?::text, '{}'::jsonb)")) {
      ps.setString(1, ORPHAN);
      ps.executeQuery().close();
    }
    return PgbusWars.of(
        "deploygate",
        "pgbus.deploy-check=fail",
        "pgbus.capsules=gate",
        "pgbus.capsule.gate.queues=it_gate");
  }

  @ArquillianResource URL url;

  @Test
  void aMissingHandlerKeepsReadinessDownWithTheReasonUntilTheJobsAreGone() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "readiness DOWN with the deploy check's reason",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].body().contains("deploy check failed");
        });
    assertEquals(503, last[0].status(), last[0].body());
    assertTrue(last[0].body().contains("unhandled queue '" + ORPHAN + "'"), last[0].body());

    deleteOrphans();

    // The bootstrap checks again every few seconds; other queues' leftovers of earlier ITs may
    // still hold it, but no longer this one.
    Await.until(
        "the gate no longer names " + ORPHAN,
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return !last[0].body().contains(ORPHAN);
        });
  }

  @AfterAll
  static void deleteOrphans() throws Exception {
    try (Connection c = helper().getConnection();
        PreparedStatement ps = c.prepareStatement("DELETE FROM pgbus.job WHERE queue = ?::text")) {
      ps.setString(1, ORPHAN);
      ps.executeUpdate();
    }
  }

  // The test's own connections: not recorded by a hostile public (-Phostile-public).
  static PGSimpleDataSource helper() {
    var ds = new PGSimpleDataSource();
    ds.setUrl(
        "jdbc:postgresql://"
            + System.getProperty("pgbus.it.db.host")
            + ":"
            + System.getProperty("pgbus.it.db.port")
            + "/"
            + System.getProperty("pgbus.it.db.name"));
    ds.setUser(System.getProperty("pgbus.it.db.user"));
    ds.setPassword(System.getProperty("pgbus.it.db.password"));
    ds.setApplicationName("pgbus-test-helper");
    return ds;
  }
}

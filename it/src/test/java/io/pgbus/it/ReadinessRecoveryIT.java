package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.engine.testing.PrivateCluster;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import java.net.URL;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The database is not there at deploy and arrives later: the application deploys, readiness is DOWN
 * and says why, then turns UP by itself, with the listener (on {@code pgbus.listener.url})
 * delivering, and a job runs. The test server's jdbc/pgbusLate points at a port where this test
 * starts a private PostgreSQL only after the deployment ({@code pgbus.it.late.port}).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class ReadinessRecoveryIT {

  private static final int PORT = Integer.getInteger("pgbus.it.late.port", 15499);

  private static PrivateCluster pg;

  @Deployment(testable = false)
  static WebArchive deployment() {
    return PgbusWars.of(
            "readiness-late",
            "pgbus.datasource=" + TestServer.current().dataSource("jdbc/pgbusLate"),
            "pgbus.listener.url=jdbc:postgresql://127.0.0.1:" + PORT + "/postgres?connectTimeout=2",
            "pgbus.listener.user=postgres",
            "pgbus.capsules=late",
            "pgbus.capsule.late.queues=it_late")
        .addClass(CompletingHandler.class);
  }

  @ArquillianResource URL url;

  @AfterAll
  static void removeDatabase() {
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void readinessTurnsUpByItselfWhenTheDatabaseArrivesAndJobsRun() throws Exception {
    String ready = TestServer.current().health(url) + "/ready";
    Http.Response[] last = {null};
    Await.until(
        "readiness DOWN for the missing database",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].status() == 503 && last[0].body().contains("database unreachable");
        });
    String down = last[0].body();

    pg = PrivateCluster.onPort(PORT).start();
    long arrived = System.nanoTime();
    Await.until(
        "readiness UP with the listener delivering",
        Duration.ofSeconds(60),
        () -> {
          last[0] = Http.get(ready);
          return last[0].status() == 200 && last[0].body().contains("\"delivering\"");
        });
    long toReady = millisSince(arrived);

    long id;
    try (Connection c = pg.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pgbus.enqueue('it_late', '{\"text\":\"late\",\"fail\":false}')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      id = rs.getLong(1);
    }
    long enqueued = System.nanoTime();
    Await.until("the job to complete", Duration.ofSeconds(30), () -> "completed".equals(state(id)));
    long toDone = millisSince(enqueued);

    assertTrue(down.contains("\"DOWN\""), down);
    assertTrue(last[0].body().contains("\"notify\""), last[0].body());
    System.out.println(
        String.format(
            "[pgbus-it] [measure] database arrives after deploy: readiness UP and delivering"
                + " after %d ms; first job done %d ms after its enqueue",
            toReady, toDone));
    System.out.println("[pgbus-it] readiness while the database was missing: " + down);
  }

  private static String state(long id) throws Exception {
    try (Connection c = pg.connect();
        PreparedStatement ps =
            c.prepareStatement("SELECT state::text FROM pgbus.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }
}

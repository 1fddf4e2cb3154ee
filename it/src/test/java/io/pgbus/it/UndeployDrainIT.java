package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Undeploying an application while its jobs run (issue #14, graceful drain): the engine stops
 * claiming, a job that ends within {@code pgbus.drain-timeout} completes, and one that would not is
 * released back to {@code available} without spending an attempt, and the server log names it. The
 * undeploy does not wait for the long job (5 minutes): its handler is interrupted once its job is
 * released. On WildFly, which waits for every EJB call in flight before it destroys the runtime
 * bean, this holds because the drain starts when the CDI application context ends ({@code
 * UndeployDrain}). The test looks from outside, over JDBC, since the application it watches goes
 * away.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class UndeployDrainIT {

  private static final String WORKER = "drain-worker";
  private static final Duration DRAIN = Duration.ofSeconds(12);

  @Deployment(name = WORKER, managed = false, testable = false)
  static WebArchive worker() {
    return PgbusWars.of(
            WORKER,
            "pgbus.capsules=drain",
            "pgbus.capsule.drain.queues=it_drain_short,it_drain_long",
            "pgbus.capsule.drain.concurrency=2",
            "pgbus.drain-timeout=" + DRAIN.toSeconds() + "s")
        .addClass(DrainHandler.class);
  }

  @ArquillianResource Deployer deployer;

  @Test
  void theShortJobFinishesAndTheLongOneIsReleasedWithItsAttemptNotSpent() throws Exception {
    deployer.deploy(WORKER);
    Await.until(
        "pgbus to create its schema",
        Duration.ofSeconds(120),
        () ->
            value(
                    "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                        + " WHERE n.nspname = 'pgbus' AND p.proname = 'enqueue'")
                != null);
    long shortJob = enqueue("it_drain_short");
    long longJob = enqueue("it_drain_long");
    // The budget as enqueued (attempt 0): max_attempts, which a claim does not change (the worker
    // may have claimed the job already; max_attempts - attempt would then be one short).
    long attemptsLeft =
        ((Number) value("SELECT max_attempts FROM pgbus.job WHERE id = ?", longJob)).longValue();

    Await.until(
        "both jobs to run",
        Duration.ofSeconds(60),
        () -> "running".equals(state(shortJob)) && "running".equals(state(longJob)));
    long undeploying = System.nanoTime();
    deployer.undeploy(WORKER);
    Duration undeployTook = Duration.ofNanos(System.nanoTime() - undeploying);

    assertEquals("completed", state(shortJob), "the short job finished within the drain");
    assertEquals("available", state(longJob), "the long job was released");
    assertEquals(attemptsLeft, budget(longJob), "attempts left: the released one is not spent");
    assertTrue(undeployTook.compareTo(DRAIN.plusSeconds(60)) < 0, "undeploy took " + undeployTook);
    String released = "pgbus job " + longJob + " (queue it_drain_long) still ran after the";
    Await.until(
        "the server log to name the released job (" + released + ")",
        Duration.ofSeconds(10),
        () -> serverLog().contains(released));
  }

  /** The server's log: Liberty's messages.log, WildFly's server.log. */
  private static String serverLog() throws Exception {
    String liberty = System.getProperty("pgbus.it.liberty.logs");
    Path log =
        liberty != null
            ? Path.of(liberty, "messages.log")
            : Path.of(System.getProperty("pgbus.it.wildfly.log", "server.log"));
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  private static long enqueue(String queue) throws SQLException {
    return ((Number) value("SELECT pgbus.enqueue(?, '{\"text\": \"drain\"}'::jsonb)", queue))
        .longValue();
  }

  private static String state(long id) throws SQLException {
    return (String) value("SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }

  /** The attempts a job has left. */
  private static long budget(long id) throws SQLException {
    return ((Number) value("SELECT max_attempts - attempt FROM pgbus.job WHERE id = ?", id))
        .longValue();
  }

  private static Object value(String sql, Object... params) throws SQLException {
    String url =
        "jdbc:postgresql://"
            + System.getProperty("pgbus.it.db.host", "127.0.0.1")
            + ":"
            + System.getProperty("pgbus.it.db.port", "5432")
            + "/"
            + System.getProperty("pgbus.it.db.name", "pgbus_it")
            // The test's own SQL: not recorded by a hostile public (-Phostile-public).
            + "?ApplicationName=pgbus-test-helper";
    try (Connection c =
            DriverManager.getConnection(
                url,
                System.getProperty("pgbus.it.db.user", "postgres"),
                System.getProperty("pgbus.it.db.password", ""));
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getObject(1) : null;
      }
    }
  }
}

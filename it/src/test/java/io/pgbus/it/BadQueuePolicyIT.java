package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pgbus.it.support.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * A bad per-queue value fails the deployment (issue #14), and the server log names the key, the
 * value and what is allowed, as every other setting's error does.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class BadQueuePolicyIT {

  private static final String BAD = "bad-queue-policy";

  @Deployment(name = BAD, managed = false, testable = false)
  static WebArchive bad() {
    return PgbusWars.of(
            BAD,
            "pgbus.capsules=slow",
            "pgbus.capsule.slow.queues=it_slow",
            "pgbus.queue.it_slow.max-attempts=0")
        .addClass(SlowHandler.class);
  }

  @ArquillianResource Deployer deployer;

  @Test
  void aBadPerQueueValueFailsTheDeploymentNamingTheKeyAndTheRange() throws Exception {
    try {
      assertThrows(Exception.class, () -> deployer.deploy(BAD));
    } finally {
      try {
        deployer.undeploy(BAD);
      } catch (RuntimeException e) {
        // nothing was deployed
      }
    }
    String expected = "pgbus.queue.it_slow.max-attempts=0 is invalid";
    Await.until(
        "the server log to name the bad key (" + expected + ")",
        Duration.ofSeconds(10),
        () -> {
          String log = serverLog();
          return log.contains(expected) && log.contains("1 to 1000");
        });
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
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A handler's business writes commit with the job's completion, and roll back when it throws. */
@ExtendWith(ArquillianExtension.class)
class HandlerTransactionIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "handler-tx",
            "pgbus.capsules=business",
            "pgbus.capsule.business.queues=it_business",
            "pgbus.capsule.business.concurrency=2",
            // A long backoff keeps a failed job retryable while the test looks at it.
            "pgbus.retry.base=1h",
            "pgbus.retry.cap=2h")
        // Where the test server writes its log (it/pom.xml), known on the client.
        .addAsResource(
            new StringAsset(
                System.getProperty("pgbus.it.liberty.logs") != null
                    ? System.getProperty("pgbus.it.liberty.logs") + "/messages.log"
                    : System.getProperty("pgbus.it.wildfly.log", "")),
            "server-log");
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void businessRowAndCompletionCommitTogether() throws Exception {
    String text = "ok-" + UUID.randomUUID();
    long id = enqueuer.enqueue("it_business", text, false);

    Await.until(
        "job " + id + " to complete", Duration.ofSeconds(30), () -> "completed".equals(state(id)));
    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
  }

  @Test
  void handlerThatThrowsRollsBackItsWritesAndLeavesTheJobRetryable() throws Exception {
    String text = "fail-" + UUID.randomUUID();
    long id = enqueuer.enqueue("it_business", text, true);

    Await.until(
        "job " + id + " to become retryable",
        Duration.ofSeconds(30),
        () -> "retryable".equals(state(id)));
    assertEquals(1, Sql.count(ds, "SELECT attempt FROM pgbus.job WHERE id = ?", id));
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
    String errors = (String) Sql.value(ds, "SELECT errors::text FROM pgbus.job WHERE id = ?", id);
    assertTrue(errors.contains("handler asked to fail for " + text), errors);

    // A failing handler is an outcome that pgbus records and logs itself; the container must not
    // log it as an unexpected EJB failure (Liberty CNTR0020E with an FFDC incident, WildFly
    // WFLYEJB0034) from pgbus's job transaction. The log is written a moment after the call.
    Thread.sleep(2_000);
    List<String> containerErrors;
    try (Stream<String> lines = Files.lines(serverLog(), StandardCharsets.UTF_8)) {
      containerErrors =
          lines
              .filter(l -> l.contains("CNTR0020E") || l.contains("WFLYEJB0034"))
              .filter(l -> l.contains("JobTransaction"))
              .toList();
    }
    assertEquals(List.of(), containerErrors, "container errors logged for pgbus's job transaction");
  }

  private static Path serverLog() throws Exception {
    String path;
    try (var in = HandlerTransactionIT.class.getClassLoader().getResourceAsStream("server-log")) {
      path = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
    }
    assertFalse(path.isEmpty(), "it/pom.xml names the server log");
    return Path.of(path);
  }

  private Object state(long id) throws Exception {
    return Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.TestServer;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * While a handler runs, the server's log context (Liberty: LogRecordContext, shown by JSON logging
 * as ext_pgbus_job_id...; WildFly: MDC) holds the job id, queue and attempt. On Liberty the test
 * also finds the handler's line in the server's JSON messages.log with those three fields.
 */
@ExtendWith(ArquillianExtension.class)
class LogFieldsIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "log-fields",
            "pgbus.capsules=logs",
            "pgbus.capsule.logs.queues=it_logfields",
            "pgbus.capsule.logs.concurrency=1")
        .addClasses(LogFieldsHandler.class)
        // Where the Liberty test server writes messages.log (it/pom.xml), known on the client.
        .addAsResource(
            new StringAsset(System.getProperty("pgbus.it.liberty.logs", "")), "liberty-logs");
  }

  @Inject JobQueue jobs;

  @Test
  void aHandlersLogLinesCarryTheJobIdQueueAndAttempt() throws Exception {
    String text = UUID.randomUUID().toString();
    long id = jobs.enqueue("it_logfields", new Marker(text, false));
    Await.until(
        "the handler ran", Duration.ofSeconds(30), () -> LogFieldsHandler.SEEN.containsKey(id));
    Map<String, String> seen = LogFieldsHandler.SEEN.get(id);
    assertEquals(Long.toString(id), seen.get("pgbus_job_id"), seen.toString());
    assertEquals("it_logfields", seen.get("pgbus_queue"), seen.toString());
    assertEquals("1", seen.get("pgbus_attempt"), seen.toString());
    // Measured for the docs (which identity a handler runs as), not a contract of pgbus.
    System.out.println(
        "LogFieldsIT: the handler ran as principal " + seen.get("handler.principal"));

    if (TestServer.current() == TestServer.LIBERTY) {
      JsonObject line = libertyJsonLine("pgbus IT handler line for " + text);
      assertEquals(Long.toString(id), line.getString("ext_pgbus_job_id", null), line.toString());
      assertEquals("it_logfields", line.getString("ext_pgbus_queue", null), line.toString());
      assertEquals("1", line.getString("ext_pgbus_attempt", null), line.toString());
    }
  }

  /**
   * The handler's line as Liberty's JSON logging wrote it to messages.log (the test server has
   * {@code <logging messageFormat="json"/>}); Liberty writes the file a moment after the call.
   */
  private static JsonObject libertyJsonLine(String message) throws Exception {
    String dir;
    try (var in = LogFieldsIT.class.getClassLoader().getResourceAsStream("liberty-logs")) {
      dir = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
    }
    assertFalse(dir.isEmpty(), "pgbus.it.liberty.logs is set by it/pom.xml on Liberty");
    Path log = Path.of(dir, "messages.log");
    AtomicReference<JsonObject> found = new AtomicReference<>();
    Await.until(
        "the handler's line in " + log,
        Duration.ofSeconds(30),
        () -> {
          try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
            lines
                .filter(l -> l.startsWith("{") && l.contains(message))
                .map(l -> Json.createReader(new StringReader(l)).readObject())
                .filter(o -> message.equals(o.getString("message", null)))
                .findFirst()
                .ifPresent(found::set);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          return found.get() != null;
        });
    return found.get();
  }
}

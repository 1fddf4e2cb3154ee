package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * While a handler runs, the server's log context (Liberty: LogRecordContext, shown by JSON logging
 * as ext_pgbus_job_id...; WildFly: MDC) holds the job id, queue and attempt.
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
        .addClasses(LogFieldsHandler.class);
  }

  @Inject JobQueue jobs;

  @Test
  void aHandlersLogLinesCarryTheJobIdQueueAndAttempt() throws Exception {
    long id = jobs.enqueue("it_logfields", new Marker(UUID.randomUUID().toString(), false));
    Await.until(
        "the handler ran", Duration.ofSeconds(30), () -> LogFieldsHandler.SEEN.containsKey(id));
    Map<String, String> seen = LogFieldsHandler.SEEN.get(id);
    assertEquals(Long.toString(id), seen.get("pgbus_job_id"), seen.toString());
    assertEquals("it_logfields", seen.get("pgbus_queue"), seen.toString());
    assertEquals("1", seen.get("pgbus_attempt"), seen.toString());
    // Measured for the docs (which identity a handler runs as), not a contract of pgbus.
    System.out.println(
        "LogFieldsIT: the handler ran as principal " + seen.get("handler.principal"));
  }
}

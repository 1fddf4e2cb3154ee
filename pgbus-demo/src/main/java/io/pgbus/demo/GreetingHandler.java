package io.pgbus.demo;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Handles the {@code greetings} queue: writes a greeting row through the JTA datasource. The row
 * commits in the same transaction as the job's completion. A name of "fail" throws, to show a
 * retry: the row is rolled back and the job comes back with backoff.
 *
 * <p>The row also records when the handler started, which the bench's W5 reads to measure the wake
 * latency inside the server (docs/performance.md).
 */
@ApplicationScoped
@Handles({"greetings_urgent", "greetings"})
public class GreetingHandler implements JobHandler<Greeting> {
  private static final Logger LOG = Logger.getLogger(GreetingHandler.class.getName());

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Greeting greeting, JobContext job) throws Exception {
    // First, so it is the moment pgbus handed the job over, not after this handler's own work.
    Instant started = Instant.now();
    String message =
        "Hello, " + greeting.name + "! (job " + job.id() + ", attempt " + job.attempt() + ")";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO demo_greeting(job_id, message, handler_started_at) VALUES (?, ?, ?)"
                    + " ON CONFLICT (job_id) DO UPDATE SET message = excluded.message,"
                    + " handler_started_at = excluded.handler_started_at")) {
      ps.setLong(1, job.id());
      ps.setString(2, message);
      ps.setObject(3, started.atOffset(ZoneOffset.UTC));
      ps.execute();
    }
    if ("fail".equals(greeting.name)) {
      throw new IllegalStateException("the demo refuses to greet 'fail'");
    }
    LOG.info(message);
    return Outcome.complete();
  }
}

package io.pgbus.demo;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Handles the {@code greetings} queue: writes a greeting row through the JTA datasource. The row
 * commits in the same transaction as the job's completion. A name of "fail" throws, to show a
 * retry: the row is rolled back and the job comes back with backoff.
 */
@ApplicationScoped
@Handles({"greetings_urgent", "greetings"})
public class GreetingHandler implements JobHandler<Greeting> {
  private static final Logger LOG = Logger.getLogger(GreetingHandler.class.getName());

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Greeting greeting, JobContext job) throws Exception {
    String message = "Hello, " + greeting.name + "! (job " + job.id() + ", attempt " + job.attempt() + ")";
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO demo_greeting(job_id, message) VALUES (?, ?)"
                    + " ON CONFLICT (job_id) DO UPDATE SET message = excluded.message")) {
      ps.setLong(1, job.id());
      ps.setString(2, message);
      ps.execute();
    }
    if ("fail".equals(greeting.name)) {
      throw new IllegalStateException("the demo refuses to greet 'fail'");
    }
    LOG.info(message);
    return Outcome.complete();
  }
}

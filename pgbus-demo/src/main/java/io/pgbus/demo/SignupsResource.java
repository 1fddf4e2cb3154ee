package io.pgbus.demo;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import jakarta.annotation.Resource;
import jakarta.annotation.security.PermitAll;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * {@code POST /api/signups?name=Ada&welcome=true&delaySeconds=0}: a business transaction as an
 * application writes one. It inserts a {@code demo_signup} row and, with {@code welcome=true},
 * enqueues a greeting for the new user in the same JTA transaction: both commit, or neither. The
 * bench's CONC-L drives it with many concurrent clients ({@code ./run-bench --with-demo
 * --only=conc-liberty}): with and without the enqueue, and with the queue paused.
 */
// Open on purpose, as GreetingsResource: the demo server listens on localhost only.
@PermitAll
@RequestScoped
@Path("signups")
@Produces(MediaType.APPLICATION_JSON)
public class SignupsResource {

  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @POST
  @Transactional
  public Map<String, Object> signUp(
      @QueryParam("name") @DefaultValue("world") String name,
      @QueryParam("welcome") @DefaultValue("true") boolean welcome,
      @QueryParam("delaySeconds") @DefaultValue("0") String delayText)
      throws Exception {
    RequestLimits.name(name);
    int delaySeconds = RequestLimits.delaySeconds(delayText);
    Long jobId = null;
    if (welcome) {
      EnqueueOptions options = EnqueueOptions.defaults().withMaxAttempts(5);
      if (delaySeconds > 0) {
        options = options.withDelay(Duration.ofSeconds(delaySeconds));
      }
      jobId = jobs.enqueue("greetings", new Greeting(name), options);
    }
    var out = new LinkedHashMap<String, Object>();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO demo_signup (name, welcome_job_id) VALUES (?, ?) RETURNING id")) {
      ps.setString(1, name);
      ps.setObject(2, jobId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        out.put("signup", rs.getLong(1));
      }
    }
    if (jobId != null) {
      out.put("welcomeJob", jobId);
    }
    return out;
  }
}

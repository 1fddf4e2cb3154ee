package io.pgbus.demo;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import jakarta.annotation.Resource;
import jakarta.annotation.security.PermitAll;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * {@code POST /api/greetings?name=Ada&count=3&delaySeconds=0&urgent=false} enqueues greeting jobs
 * in one JTA transaction; {@code GET /api/greetings} shows the job counts and the latest greetings.
 * Out of bounds parameters (count 1 to 1000, delaySeconds 0 to 7 days, name up to 200 characters)
 * are answered with 400 ({@link RequestLimits}).
 */
// Open on purpose: the demo's own API, on a demo server that listens on localhost only
// (liberty-config/server.xml). A real application protects its endpoints; the doctor is for
// pgbus-admin only.
@PermitAll
@RequestScoped
@Path("greetings")
@Produces(MediaType.APPLICATION_JSON)
public class GreetingsResource {

  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @POST
  @Transactional
  public Map<String, Object> enqueue(
      @QueryParam("name") @DefaultValue("world") String name,
      @QueryParam("count") @DefaultValue("1") String countText,
      @QueryParam("delaySeconds") @DefaultValue("0") String delayText,
      @QueryParam("urgent") @DefaultValue("false") boolean urgent) {
    int count = RequestLimits.count(countText);
    int delaySeconds = RequestLimits.delaySeconds(delayText);
    RequestLimits.name(name);
    EnqueueOptions options = EnqueueOptions.defaults().withMaxAttempts(5);
    if (delaySeconds > 0) {
      options = options.withDelay(Duration.ofSeconds(delaySeconds));
    }
    List<Long> ids =
        jobs.enqueueAll(
            urgent ? "greetings_urgent" : "greetings",
            Collections.nCopies(count, new Greeting(name)),
            options);
    return Map.of("enqueued", ids);
  }

  @GET
  public Map<String, Object> status() throws Exception {
    var out = new LinkedHashMap<String, Object>();
    try (Connection c = dataSource.getConnection()) {
      var states = new LinkedHashMap<String, Long>();
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT queue::text || ':' || state::text, count(*) FROM pgbus.job GROUP BY 1 ORDER BY 1");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          states.put(rs.getString(1), rs.getLong(2));
        }
      }
      out.put("jobs", states);
      var latest = new ArrayList<String>();
      try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT message FROM demo_greeting ORDER BY written_at DESC LIMIT 10");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          latest.add(rs.getString(1));
        }
      }
      out.put("latestGreetings", latest);
    }
    return out;
  }
}

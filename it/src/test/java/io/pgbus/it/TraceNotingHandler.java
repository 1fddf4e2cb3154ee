package io.pgbus.it;

import io.opentelemetry.api.trace.Span;
import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * Writes the trace id of the span it runs in to it_handled, committed with the job's completion
 * (TracingEarIT reads it back over HTTP, from outside the EAR).
 */
@ApplicationScoped
@Handles("it_trace_ear")
public class TraceNotingHandler implements JobHandler<Marker> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, Span.current().getSpanContext().getTraceId());
      ps.setLong(2, context.id());
      ps.setString(3, context.queue());
      ps.setInt(4, context.attempt());
      ps.execute();
    }
    return Outcome.complete();
  }
}

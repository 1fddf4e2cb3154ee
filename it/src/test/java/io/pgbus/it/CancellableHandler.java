package io.pgbus.it;

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
 * Writes its business row through the JTA datasource, then waits until it is cancelled: the
 * interrupt ends its sleep. {@link CancelRunningJobIT} checks the row was rolled back.
 */
@ApplicationScoped
@Handles("it_cancel")
public class CancellableHandler implements JobHandler<Marker> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, marker.text);
      ps.setLong(2, context.id());
      ps.setString(3, context.queue());
      ps.setInt(4, context.attempt());
      ps.execute();
    }
    long until = System.nanoTime() + 60_000_000_000L;
    while (!context.cancellationRequested() && System.nanoTime() < until) {
      Thread.sleep(100);
    }
    return Outcome.complete();
  }
}

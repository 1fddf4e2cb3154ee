package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * Enqueues a job through {@link ItRunAsBean} and writes that job's enqueued_by to it_handled, with
 * the job's completion (RunAsIT reads it back over HTTP).
 */
@ApplicationScoped
@Handles("it_runas")
public class RunAsHandler implements JobHandler<Marker> {

  @EJB ItRunAsBean runAs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    long child = runAs.enqueueAsRunAsUser(marker.text);
    Object enqueuedBy =
        Sql.value(dataSource, "SELECT enqueued_by FROM pgbus.job WHERE id = ?", child);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, String.valueOf(enqueuedBy));
      ps.setLong(2, context.id());
      ps.setString(3, context.queue());
      ps.setInt(4, context.attempt());
      ps.execute();
    }
    return Outcome.complete();
  }
}

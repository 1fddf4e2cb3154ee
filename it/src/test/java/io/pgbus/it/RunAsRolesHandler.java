package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * The handler of a queue that runs as the enqueuer (pgbus.queue.it_runas_roles.run-as=enqueuer):
 * calls an EJB that only pgbus-admin may call and writes the caller principal it saw to it_handled,
 * with the job's completion. An enqueuer without the role makes the call, and so the job, fail.
 */
@ApplicationScoped
@Handles("it_runas_roles")
public class RunAsRolesHandler implements JobHandler<Marker> {

  @EJB ItRolesBean roles;

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    String caller = roles.callerWithAdminRole();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, caller);
      ps.setLong(2, context.id());
      ps.setString(3, context.queue());
      ps.setInt(4, context.attempt());
      ps.execute();
    }
    return Outcome.complete();
  }
}

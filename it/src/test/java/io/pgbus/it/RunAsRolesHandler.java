package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.ApplicationScoped;
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
    // In the job's transaction: it commits with the completion.
    HandledRows.insert(dataSource, roles.callerWithAdminRole(), context);
    return Outcome.complete();
  }
}

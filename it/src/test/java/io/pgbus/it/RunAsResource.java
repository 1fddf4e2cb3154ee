package io.pgbus.it;

import io.pgbus.InvalidJobException;
import io.pgbus.JobQueue;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import javax.sql.DataSource;

/**
 * RunAsIT's enqueuers for the queue it_runas_roles, whose handler runs as the enqueuer: an
 * authenticated user (admin or viewer), nobody, and an SQL client naming a user.
 */
@RequestScoped
@Path("runas")
@DeclareRoles({"pgbus-admin", "pgbus-viewer"})
public class RunAsResource {

  static final String QUEUE = "it_runas_roles";

  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @POST
  @Path("enqueue")
  @RolesAllowed({"pgbus-admin", "pgbus-viewer"})
  public String enqueue(@QueryParam("text") String text) {
    return Long.toString(jobs.enqueue(QUEUE, new Marker(text, false)));
  }

  /** Without a caller: "refused: " and the error's message. */
  @POST
  @Path("anonymous")
  @PermitAll
  public String anonymous(@QueryParam("text") String text) {
    try {
      return Long.toString(jobs.enqueue(QUEUE, new Marker(text, false)));
    } catch (InvalidJobException e) {
      return "refused: " + e.getMessage();
    }
  }

  /** An SQL enqueue that names the user to run as (pgbus.run_as), in one statement. */
  @POST
  @Path("sql")
  @RolesAllowed("pgbus-admin")
  public String sql(@QueryParam("text") String text, @QueryParam("user") String user)
      throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT pgbus.enqueue(?, jsonb_build_object('text', ?::text, 'fail', false))"
                    + " FROM (SELECT set_config('pgbus.run_as', ?, true) AS r OFFSET 0) s")) {
      ps.setString(1, QUEUE);
      ps.setString(2, text);
      ps.setString(3, user);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return Long.toString(rs.getLong(1));
      }
    }
  }

  /** "state run_as errors": the job's state, run-as user and error texts. */
  @GET
  @Path("{id}")
  @PermitAll
  public String job(@PathParam("id") long id) throws Exception {
    return String.valueOf(
        Sql.value(
            ds,
            "SELECT state::text || ' ' || coalesce(run_as, '-') || ' ' || coalesce(errors::text, '')"
                + " FROM pgbus.job WHERE id = ?",
            id));
  }
}

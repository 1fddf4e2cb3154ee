package io.pgbus.it;

import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import javax.sql.DataSource;

/**
 * The order form of {@link EarApplicationIT}'s application: a POST enqueues a job in the EJB's
 * transaction, a GET shows the job's state and the rows its handler wrote, as a user would check.
 */
@RequestScoped
@Path("orders")
public class OrdersResource {

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @POST
  public String order(@QueryParam("queue") String queue, @QueryParam("text") String text)
      throws Exception {
    return Long.toString(enqueuer.enqueue(queue, text, false));
  }

  /** "state handled": the job's state and how many it_handled rows its handler committed. */
  @GET
  @Path("{id}")
  public String job(@PathParam("id") long id) throws Exception {
    Object state = Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id);
    long handled = Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id);
    return state + " " + handled;
  }

  /** The texts its handler wrote to it_handled, one per attempt, space-separated. */
  @GET
  @Path("{id}/handled")
  public String handled(@PathParam("id") long id) throws Exception {
    Object texts =
        Sql.value(
            ds,
            "SELECT coalesce(string_agg(text, ' ' ORDER BY attempt), '') FROM it_handled"
                + " WHERE job_id = ?",
            id);
    return texts.toString();
  }
}

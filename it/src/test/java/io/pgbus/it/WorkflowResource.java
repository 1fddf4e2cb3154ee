package io.pgbus.it;

import jakarta.ejb.EJB;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.util.stream.Collectors;

/**
 * {@link WorkflowIT}'s application endpoint: a POST enqueues the workflow through an EJB and
 * answers {"workflow":5,"charge":41,...}; a GET of {@code runs} answers how many times each job was
 * handed to a handler in this JVM.
 */
@RequestScoped
@Path("workflow-it")
public class WorkflowResource {

  @EJB WorkflowStarter starter;

  @POST
  @Produces(MediaType.APPLICATION_JSON)
  public String start(@QueryParam("name") String name) {
    return starter.start(name).entrySet().stream()
        .map(e -> "\"" + e.getKey() + "\":" + e.getValue())
        .collect(Collectors.joining(",", "{", "}"));
  }

  @GET
  @Path("runs")
  @Produces(MediaType.APPLICATION_JSON)
  public String runs() {
    return WorkflowRuns.json();
  }
}

package io.pgbus.fleet.app;

import io.pgbus.JobQueue;
import jakarta.annotation.security.PermitAll;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * Pauses and resumes a queue through the injected {@link JobQueue}, as an operator's console would.
 * Unauthenticated: the fleet's servers listen on 127.0.0.1 only; an application of yours puts such
 * endpoints behind a role.
 */
// Open on purpose: the fleet test's own servers, on localhost, driven by FleetIT without a login.
@PermitAll
@RequestScoped
@Path("queues/{queue}")
@Produces(MediaType.TEXT_PLAIN)
public class QueueResource {

  @Inject JobQueue jobs;

  /** "true" when the queue was running and is paused now. */
  @POST
  @Path("pause")
  public String pause(@PathParam("queue") String queue) {
    return String.valueOf(jobs.pause(queue));
  }

  /** "true" when the queue was paused and runs again now. */
  @POST
  @Path("resume")
  public String resume(@PathParam("queue") String queue) {
    return String.valueOf(jobs.resume(queue));
  }
}

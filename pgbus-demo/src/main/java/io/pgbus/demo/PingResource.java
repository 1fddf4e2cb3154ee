package io.pgbus.demo;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** Liveness probe for the demo itself: {@code GET /api/ping} answers {@code pong}. */
@Path("ping")
public class PingResource {

  @GET
  @Produces(MediaType.TEXT_PLAIN)
  public String ping() {
    return "pong";
  }
}

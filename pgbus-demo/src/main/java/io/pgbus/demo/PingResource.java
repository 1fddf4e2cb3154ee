package io.pgbus.demo;

import jakarta.annotation.security.PermitAll;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/** Liveness probe for the demo itself: {@code GET /api/ping} answers {@code pong}. */
// Open on purpose: the demo's own API, on a demo server that listens on localhost only
// (liberty-config/server.xml). A real application protects its endpoints; the doctor is for
// pgbus-admin only.
@PermitAll
@Path("ping")
public class PingResource {

  @GET
  @Produces(MediaType.TEXT_PLAIN)
  public String ping() {
    return "pong";
  }
}

package com.example.orders;

import io.pgbus.JobQueue;
import jakarta.annotation.security.PermitAll;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;

/** A JAX-RS resource that injects JobQueue: a public sign-up form, open to anonymous callers. */
@RequestScoped
@Path("signups")
@PermitAll
public class SignupResource {
  @Inject JobQueue jobs;

  @POST
  public long signUp(@QueryParam("address") String address) {
    if (address == null || address.isBlank() || address.length() > 254) {
      throw new WebApplicationException("address: 1 to 254 characters", 400);
    }
    return jobs.enqueue("emails", new Email(address));
  }
}

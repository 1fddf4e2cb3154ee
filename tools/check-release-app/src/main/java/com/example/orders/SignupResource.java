package com.example.orders;

import io.pgbus.JobQueue;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

/** A JAX-RS resource that injects JobQueue. */
@RequestScoped
@Path("signups")
public class SignupResource {
  @Inject JobQueue jobs;

  @POST
  public long signUp(@QueryParam("address") String address) {
    return jobs.enqueue("emails", new Email(address));
  }
}

package io.pgbus.jakarta;

import io.pgbus.engine.Doctor;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * {@code GET <your JAX-RS root>/pgbus/doctor}: the doctor's report as JSON. Available when the
 * application has a JAX-RS {@code Application} that does not list its classes.
 */
@RequestScoped
@Path("pgbus/doctor")
public class DoctorResource {

  @Inject PgbusRuntime runtime;

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Doctor.Report report() {
    return runtime.doctor();
  }
}

package io.pgbus.it;

import io.pgbus.jakarta.DoctorResource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/** How an application opts in to the doctor: a subclass with a path of its own choosing. */
@RequestScoped
@Path("pgbus/doctor")
public class ItDoctor extends DoctorResource {}

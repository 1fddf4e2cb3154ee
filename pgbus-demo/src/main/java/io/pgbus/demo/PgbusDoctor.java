package io.pgbus.demo;

import io.pgbus.jakarta.DoctorResource;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * The demo opts in to pgbus's doctor at {@code /api/pgbus/doctor}; only users in the role
 * pgbus-admin may read it (the demo server's registry has one: admin).
 */
@RolesAllowed(DoctorResource.ROLE)
@RequestScoped
@Path("pgbus/doctor")
public class PgbusDoctor extends DoctorResource {}

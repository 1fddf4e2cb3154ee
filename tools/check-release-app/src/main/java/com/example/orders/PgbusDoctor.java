package com.example.orders;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * README step 5: the doctor. Not open: DoctorResource declares {@code @RolesAllowed("pgbus-admin")}
 * on its method and checks the role in it as well; the subclass only gives it a path.
 */
@RequestScoped
@Path("pgbus/doctor")
public class PgbusDoctor extends io.pgbus.jakarta.DoctorResource {}

package com.example.orders;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/** README step 5: the doctor. */
@RequestScoped
@Path("pgbus/doctor")
public class PgbusDoctor extends io.pgbus.jakarta.DoctorResource {}

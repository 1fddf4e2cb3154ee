package io.pgbus.it;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** A JAX-RS root for test WARs that need pgbus's REST resources (the doctor). */
@ApplicationPath("/api")
public class ItRestApplication extends Application {}

package com.example.orders;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** The JAX-RS application. */
@ApplicationPath("api")
public class OrdersApplication extends Application {}

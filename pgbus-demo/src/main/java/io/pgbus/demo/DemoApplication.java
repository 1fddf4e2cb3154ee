package io.pgbus.demo;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/** Mounts the demo's REST resources under {@code /api}. */
@ApplicationPath("/api")
public class DemoApplication extends Application {}

package io.pgbus.fleet.app;

import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;
import java.util.Set;

/**
 * Mounts {@link QueueResource} under {@code /api}, and nothing else: with an explicit class list,
 * no JAX-RS resource of a library in WEB-INF/lib is mounted by class scanning.
 */
@ApplicationPath("/api")
public class FleetApplication extends Application {
  @Override
  public Set<Class<?>> getClasses() {
    return Set.of(QueueResource.class);
  }
}

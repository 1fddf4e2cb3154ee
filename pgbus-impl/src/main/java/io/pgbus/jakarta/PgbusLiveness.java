package io.pgbus.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/** DOWN when a capsule loop has shown no progress for longer than pgbus.liveness.stall-threshold. */
@Liveness
@ApplicationScoped
public class PgbusLiveness implements HealthCheck {

  @Inject PgbusRuntime runtime;

  @Override
  public HealthCheckResponse call() {
    List<String> stalled = runtime.stalledCapsules();
    return HealthCheckResponse.named("pgbus-capsules")
        .status(stalled.isEmpty())
        .withData("stalled", String.join(",", stalled))
        .build();
  }
}

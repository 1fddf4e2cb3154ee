package io.pgbus.health;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Liveness;

/**
 * {@code pgbus-capsules}: DOWN when a capsule loop has shown no progress for longer than
 * pgbus.liveness.stall-threshold.
 */
@Liveness
@ApplicationScoped
public class PgbusLiveness implements HealthCheck {

  @Override
  public HealthCheckResponse call() {
    return PgbusHealth.liveness();
  }
}

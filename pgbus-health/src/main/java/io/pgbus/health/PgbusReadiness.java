package io.pgbus.health;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * {@code pgbus}: UP when the database is reachable, the schema is at the expected version and the
 * engine runs; the data says why not, in short categories (docs/operations.md, Health).
 */
@Readiness
@ApplicationScoped
public class PgbusReadiness implements HealthCheck {

  @Override
  public HealthCheckResponse call() {
    return PgbusHealth.readiness();
  }
}

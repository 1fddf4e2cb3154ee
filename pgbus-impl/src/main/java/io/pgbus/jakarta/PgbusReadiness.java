package io.pgbus.jakarta;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * UP when the database is reachable, the schema is at the expected version and the engine runs.
 * A degraded listener does not make it DOWN (capsules poll instead), but the data shows it. A
 * stalled capsule does: {@code stalled} names it with a short category, for example {@code "main
 * (loop ended)"} (see {@link io.pgbus.engine.Capsule#stall}).
 */
@Readiness
@ApplicationScoped
public class PgbusReadiness implements HealthCheck {

  @Inject PgbusRuntime runtime;

  @Override
  public HealthCheckResponse call() {
    PgbusRuntime.Status s = runtime.status();
    HealthCheckResponseBuilder b = HealthCheckResponse.named("pgbus").status(s.ready());
    s.data().forEach((k, v) -> b.withData(k, String.valueOf(v)));
    return b.build();
  }
}

package io.pgbus.jakarta;

import io.pgbus.health.PgbusHealth;
import java.util.List;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;

/**
 * The runtime's health as MicroProfile Health responses, published to pgbus-health's checks ({@link
 * PgbusHealth}), which may live in another class loader (an EAR's lib/).
 */
final class HealthResponses {
  private HealthResponses() {}

  /**
   * UP when the database is reachable, the schema is at the expected version and the engine runs. A
   * degraded or failed listener does not make it DOWN (capsules poll instead), but the data shows
   * it. A stalled capsule does: {@code stalled} names it with a short category, for example {@code
   * "main (loop ended)"} (see {@link io.pgbus.engine.EngineStatus.CapsuleStatus#stall}).
   */
  static HealthCheckResponse readiness(PgbusRuntime runtime) {
    PgbusRuntime.Status s = runtime.status();
    HealthCheckResponseBuilder b =
        HealthCheckResponse.named(PgbusHealth.READINESS).status(s.ready());
    s.data().forEach((k, v) -> b.withData(k, String.valueOf(v)));
    return b.build();
  }

  /**
   * DOWN when a capsule loop has shown no progress for longer than pgbus.liveness.stall-threshold.
   */
  static HealthCheckResponse liveness(PgbusRuntime runtime) {
    List<String> stalled = runtime.stalledCapsules();
    return HealthCheckResponse.named(PgbusHealth.LIVENESS)
        .status(stalled.isEmpty())
        .withData("stalled", String.join(",", stalled))
        .build();
  }
}

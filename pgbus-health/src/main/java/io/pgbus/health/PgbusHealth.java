package io.pgbus.health;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.eclipse.microprofile.health.HealthCheckResponse;

/**
 * Where the pgbus runtime of this application publishes its health, for the checks of this jar to
 * report. One runtime per application: a second publish replaces the first. The checks live in
 * whichever class loader holds this class (an EAR's {@code lib/}, or the WAR), so the runtime and
 * the checks meet here even when the server's health subsystem cannot see the runtime's beans.
 */
public final class PgbusHealth {

  /** The readiness check's name. */
  public static final String READINESS = "pgbus";

  /** The liveness check's name. */
  public static final String LIVENESS = "pgbus-capsules";

  private record Source(
      Supplier<HealthCheckResponse> readiness, Supplier<HealthCheckResponse> liveness) {}

  private static final AtomicReference<Source> SOURCE = new AtomicReference<>();

  private PgbusHealth() {}

  /** Called by the runtime when it starts; the returned handle withdraws exactly this source. */
  public static Runnable publish(
      Supplier<HealthCheckResponse> readiness, Supplier<HealthCheckResponse> liveness) {
    Source s = new Source(Objects.requireNonNull(readiness), Objects.requireNonNull(liveness));
    SOURCE.set(s);
    return () -> SOURCE.compareAndSet(s, null);
  }

  /** DOWN with reason "not started" until a runtime has published: nothing runs jobs yet. */
  static HealthCheckResponse readiness() {
    Source s = SOURCE.get();
    return s == null ? notStarted(READINESS, false) : s.readiness().get();
  }

  /** UP until a runtime has published: there is no capsule that could be stalled. */
  static HealthCheckResponse liveness() {
    Source s = SOURCE.get();
    return s == null ? notStarted(LIVENESS, true) : s.liveness().get();
  }

  private static HealthCheckResponse notStarted(String name, boolean up) {
    return HealthCheckResponse.named(name).status(up).withData("reason", "not started").build();
  }
}

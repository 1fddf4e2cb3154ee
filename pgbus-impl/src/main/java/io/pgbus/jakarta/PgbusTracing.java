package io.pgbus.jakarta;

import io.pgbus.engine.JobTracing;

/**
 * Finds the tracing adapter: {@code io.pgbus.jakarta.tracing.OtelTracing} when the OpenTelemetry
 * API is on the class path and enabled, else {@link JobTracing#NONE}. Reflective, like {@link
 * PgbusMetrics#load}, so that a server without OpenTelemetry never links the adapter.
 */
final class PgbusTracing {

  private static final System.Logger LOG = System.getLogger(PgbusTracing.class.getName());

  private PgbusTracing() {}

  static JobTracing load() {
    try {
      Class.forName("io.opentelemetry.api.trace.Span", false, PgbusTracing.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      LOG.log(
          System.Logger.Level.INFO, "pgbus tracing is off: this server has no OpenTelemetry API");
      return JobTracing.NONE;
    }
    try {
      JobTracing tracing =
          (JobTracing)
              Class.forName("io.pgbus.jakarta.tracing.OtelTracing")
                  .getMethod("create")
                  .invoke(null);
      LOG.log(
          System.Logger.Level.INFO,
          tracing == JobTracing.NONE
              ? "pgbus tracing is off: OpenTelemetry is disabled or not offered as a CDI bean (set otel.sdk.disabled=false to turn it on)"
              : "pgbus tracing is on: handlers run in spans that continue the enqueuer's trace");
      return tracing;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      LOG.log(System.Logger.Level.WARNING, "pgbus tracing is off: {0}", e.toString());
      return JobTracing.NONE;
    }
  }
}

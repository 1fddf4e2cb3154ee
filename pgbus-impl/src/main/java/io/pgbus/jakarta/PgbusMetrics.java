package io.pgbus.jakarta;

import io.pgbus.engine.Engine;
import io.pgbus.engine.JobEvents;
import javax.sql.DataSource;

/**
 * Port: where pgbus reports what it does. The MicroProfile Metrics adapter or the OpenTelemetry
 * adapter implements it (see {@link #load}); without either {@link #NONE} keeps the EAR deployable.
 */
public interface PgbusMetrics {

  PgbusMetrics NONE = new PgbusMetrics() {};

  /** The description of the {@code pgbus.wakes} gauge, the same for every meter library. */
  String WAKES_DESCRIPTION =
      "queues of committed Java enqueues since start (pgbus.wake-mode=coalesced), by outcome:"
          + " local (in-process wakes), sent (NOTIFYed to the other JVMs), coalesced (merged into"
          + " a waiting send), failed (left to the poll)";

  /** Jobs enqueued through {@link io.pgbus.JobQueue} (not those enqueued in SQL). */
  default void enqueued(String queue, int count) {}

  /** What the engine reports per job. */
  default JobEvents jobEvents() {
    return JobEvents.NONE;
  }

  /** Registers the gauges that read the engine; called once the engine exists. */
  default void bind(Engine engine, DataSource dataSource) {}

  /**
   * Drops what reads the stopped engine. A server-wide OpenTelemetry SDK outlives the application,
   * and would otherwise keep calling an undeployed application's gauge callbacks.
   */
  default void close() {}

  /**
   * The adapter for {@code pgbus.metrics}: {@code auto} (the default) takes MicroProfile Metrics
   * where the server has it, else OpenTelemetry where the server has its API (MicroProfile
   * Telemetry 2, WildFly's opentelemetry subsystem), else none; {@code mp} and {@code otel} ask for
   * one and fall back to none, with a warning, when it is missing; {@code none} turns metrics off.
   */
  static PgbusMetrics load(String mode) {
    boolean mp = present("org.eclipse.microprofile.metrics.MetricRegistry");
    boolean otel = present("io.opentelemetry.api.metrics.Meter");
    String adapter =
        switch (mode) {
          case "none" -> null;
          case "mp" ->
              mp ? "io.pgbus.jakarta.metrics.MpMetrics" : missing(mode, "MicroProfile Metrics");
          case "otel" ->
              otel ? "io.pgbus.jakarta.otel.OtelMetrics" : missing(mode, "the OpenTelemetry API");
          default ->
              mp
                  ? "io.pgbus.jakarta.metrics.MpMetrics"
                  : otel
                      ? "io.pgbus.jakarta.otel.OtelMetrics"
                      : missing(mode, "MicroProfile Metrics nor OpenTelemetry");
        };
    if (adapter == null) {
      return NONE;
    }
    try {
      PgbusMetrics m = (PgbusMetrics) Class.forName(adapter).getDeclaredConstructor().newInstance();
      System.getLogger(PgbusMetrics.class.getName())
          .log(System.Logger.Level.INFO, "pgbus metrics (pgbus.metrics={0}): {1}", mode, adapter);
      return m;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      System.getLogger(PgbusMetrics.class.getName())
          .log(System.Logger.Level.WARNING, "pgbus metrics are off: {0}", e.toString());
      return NONE;
    }
  }

  private static boolean present(String className) {
    try {
      Class.forName(className, false, PgbusMetrics.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  private static String missing(String mode, String what) {
    System.getLogger(PgbusMetrics.class.getName())
        .log(
            "auto".equals(mode) ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
            "pgbus metrics are off (pgbus.metrics={0}): this server has no {1}; enable mpMetrics"
                + " or mpTelemetry-2.0+ (Liberty), the opentelemetry subsystem (WildFly)",
            mode,
            what);
    return null;
  }
}

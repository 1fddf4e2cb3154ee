package io.pgbus.jakarta;

import io.pgbus.engine.Engine;
import io.pgbus.engine.JobEvents;
import javax.sql.DataSource;

/**
 * Port: where pgbus reports what it does. The MicroProfile Metrics adapter implements it when the
 * server has MP Metrics; elsewhere (WildFly without it) {@link #NONE} keeps the EAR deployable.
 */
public interface PgbusMetrics {

  PgbusMetrics NONE = new PgbusMetrics() {};

  /** Jobs enqueued through {@link io.pgbus.JobQueue} (not those enqueued in SQL). */
  default void enqueued(String queue, int count) {}

  /** What the engine reports per job. */
  default JobEvents jobEvents() {
    return JobEvents.NONE;
  }

  /** Registers the gauges that read the engine; called once the engine exists. */
  default void bind(Engine engine, DataSource dataSource) {}

  /** Loads the MP Metrics adapter when MP Metrics is on the class path, else {@link #NONE}. */
  static PgbusMetrics load() {
    try {
      Class.forName(
          "org.eclipse.microprofile.metrics.MetricRegistry", false, PgbusMetrics.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      System.getLogger(PgbusMetrics.class.getName())
          .log(System.Logger.Level.INFO, "pgbus metrics are off: this server has no MicroProfile Metrics");
      return NONE;
    }
    try {
      return (PgbusMetrics)
          Class.forName("io.pgbus.jakarta.metrics.MpMetrics")
              .getDeclaredConstructor()
              .newInstance();
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      System.getLogger(PgbusMetrics.class.getName())
          .log(System.Logger.Level.WARNING, "pgbus metrics are off: {0}", e.toString());
      return NONE;
    }
  }
}

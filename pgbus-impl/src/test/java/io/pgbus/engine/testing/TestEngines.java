package io.pgbus.engine.testing;

import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JobFunction;
import io.pgbus.engine.ListenerConnections;
import io.pgbus.engine.ListenerState;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Engines on a {@link TestDatabase} that are stopped after each test, whatever it did.
 *
 * <pre>{@code
 * @RegisterExtension final TestEngines engines = new TestEngines(db);
 * Engine e = engines.start(engines.config().capsule("main", 4, "q").build(), handler);
 * }</pre>
 */
public final class TestEngines implements AfterEachCallback {

  private static final AtomicInteger WORKERS = new AtomicInteger();

  private final TestDatabase db;
  private final List<Engine> started = new CopyOnWriteArrayList<>();

  public TestEngines(TestDatabase db) {
    this.db = db;
  }

  /**
   * A config with test-friendly timings: quick reconnects and probes, a short drain, and a unique
   * worker id. Everything else is the engine's default.
   */
  public EngineConfig.Builder config() {
    return EngineConfig.builder()
        .workerId("test-worker-" + WORKERS.incrementAndGet())
        .reconnectMin(Duration.ofMillis(50))
        .reconnectMax(Duration.ofMillis(500))
        .probeTimeout(Duration.ofSeconds(2))
        .drainTimeout(Duration.ofSeconds(5));
  }

  /** A LISTEN connection factory: a plain DriverManager connection to the test database. */
  public ListenerConnections listenerConnections() {
    String url = db.jdbcUrl();
    return () -> DriverManager.getConnection(url);
  }

  /** A builder with the test database's listener connections; maintenance stays the default. */
  public Engine.Builder builder(EngineConfig config) {
    return Engine.builder(config, db.dataSource())
        .schema(db.schema())
        .listenerConnections(listenerConnections());
  }

  /** Builds and starts an engine with a listener; stopped after the test. */
  public Engine start(EngineConfig config, JobFunction jobs) {
    return start(builder(config).jobs(jobs));
  }

  /** Builds and starts an engine; stopped after the test. */
  public Engine start(Engine.Builder builder) {
    Engine engine = builder.build();
    started.add(engine);
    engine.start();
    return engine;
  }

  /** Waits until the engine's listener has proved delivery with its self-probe. */
  public static void awaitDelivering(Engine engine) {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(10),
        () -> engine.status().listener().state(),
        s -> s == ListenerState.DELIVERING);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    for (Engine e : started) {
      e.stop();
    }
    started.clear();
  }
}

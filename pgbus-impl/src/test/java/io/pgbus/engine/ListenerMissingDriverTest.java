package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An application that does not see pgjdbc's classes (on WildFly: a jboss-deployment-structure.xml
 * inside an EAR's WAR, which WildFly ignores) gets {@code NoClassDefFoundError:
 * org/postgresql/PGConnection} when the listener unwraps its connection. The listener says so:
 * FAILED with the cause, not STOPPED, no reconnect loop, a doctor check whose fix names where the
 * file goes; and the capsules poll, so jobs still run.
 */
class ListenerMissingDriverTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aMissingDriverClassFailsTheListenerTruthfullyWhileCapsulesPoll() {
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 1, "nodriver")
                        .pollInterval(Duration.ofMillis(200))
                        .pollCeiling(Duration.ofSeconds(60))
                        .reconnectMin(Duration.ofMillis(50))
                        .reconnectMax(Duration.ofMillis(100))
                        .build(),
                    db.dataSource())
                .listenerConnections(this::connectionWithoutDriverClasses)
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));

    Await.until(
        "the listener to fail",
        Duration.ofSeconds(10),
        engine::listenerState,
        s -> s == ListenerState.FAILED);
    Notifier notifier = engine.notifier();
    assertThat(notifier.lastError()).isEqualTo("driver missing: org/postgresql/PGConnection");

    long id = jobs.enqueue("nodriver");
    events.awaitFinished(id, 1, Duration.ofSeconds(10));
    assertThat(engine.listenerState())
        .as("still failed, not stopped")
        .isEqualTo(ListenerState.FAILED);
    assertThat(notifier.attempts()).as("no reconnect can bring a class back").isEqualTo(1);

    Doctor.Check listener =
        Doctor.examine(engine, db.dataSource(), 20, "k").checks().stream()
            .filter(c -> c.name().equals("listener"))
            .findFirst()
            .orElseThrow();
    assertThat(listener.status()).isEqualTo(Doctor.Status.FAIL);
    assertThat(listener.detail()).contains("driver missing").contains("capsules poll");
    assertThat(listener.fix()).contains("META-INF").contains("org.postgresql");
    assertThat(
            Notifier.missingClassMessage(new NoClassDefFoundError("org/postgresql/PGConnection")))
        .contains("org/postgresql/PGConnection")
        .contains("EAR's META-INF")
        .contains("sub-deployment");
  }

  /** A real connection whose unwrap fails as it does when the driver's classes are not visible. */
  private Connection connectionWithoutDriverClasses() throws java.sql.SQLException {
    Connection real = DriverManager.getConnection(db.jdbcUrl());
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("unwrap")) {
                throw new NoClassDefFoundError("org/postgresql/PGConnection");
              }
              try {
                return method.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The listener hands back its connection listening on nothing: a container's pool may keep the
 * backend for the next borrower (WildFly's pool cannot be switched off), which would otherwise go
 * on queueing notifications for nobody. Here a fake pool keeps every backend open on close.
 */
class ListenerReleaseTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** The real connections behind what the fake pool handed out, in order. */
  private final List<Connection> backends = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeBackends() throws SQLException {
    for (Connection c : backends) {
      c.close();
    }
  }

  @Test
  void aStoppedListenerLeavesItsPooledBackendListeningOnNothing() throws Exception {
    Engine engine = engines.start(builder(w -> {}));
    TestEngines.awaitDelivering(engine);
    assertThat(listeningChannels(backends.get(0))).as("while it listens").isNotEmpty();

    engine.stop();

    assertThat(backends).hasSize(1);
    assertThat(listeningChannels(backends.get(0))).as("after the stop").isEmpty();
  }

  @Test
  void aListenerThatReconnectsAfterAFailureLeavesTheOldBackendListeningOnNothing()
      throws Exception {
    var failOnce = new AtomicBoolean(true);
    Engine[] engine = new Engine[1];
    engine[0] =
        engines.start(
            builder(
                w -> {
                  if (w.everyone() && failOnce.getAndSet(false)) {
                    throw new IllegalStateException("simulated failure to deliver a wake");
                  }
                  engine[0].wake(w);
                }));

    Await.until(
        "the listener to reconnect",
        Duration.ofSeconds(10),
        () -> engine[0].notifier().connects() >= 2 && engine[0].listenerState().delivering());

    assertThat(listeningChannels(backends.get(0))).as("the first backend").isEmpty();
    assertThat(listeningChannels(backends.get(1))).as("the one in use").isNotEmpty();
  }

  private Engine.Builder builder(java.util.function.Consumer<Wake> wakes) {
    return Engine.builder(engines.config().capsule("main", 1, "released").build(), db.dataSource())
        .listenerConnections(this::borrow)
        .wakes(wakes)
        .maintenance(false)
        .jobs((job, tx) -> Outcome.complete());
  }

  /** A pooled connection: its close hands it back, and the backend stays open. */
  private Connection borrow() throws SQLException {
    Connection real = DriverManager.getConnection(db.jdbcUrl());
    backends.add(real);
    return (Connection)
        Proxy.newProxyInstance(
            ListenerReleaseTest.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, m, args) -> {
              if (m.getName().equals("close")) {
                return null;
              }
              try {
                return m.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private static List<String> listeningChannels(Connection backend) throws SQLException {
    try (Statement st = backend.createStatement();
        ResultSet rs = st.executeQuery("SELECT pg_listening_channels()")) {
      var channels = new java.util.ArrayList<String>();
      while (rs.next()) {
        channels.add(rs.getString(1));
      }
      return channels;
    }
  }
}

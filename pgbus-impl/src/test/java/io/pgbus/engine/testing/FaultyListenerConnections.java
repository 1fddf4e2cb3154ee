package io.pgbus.engine.testing;

import io.pgbus.engine.ListenerConnections;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A fake at the {@link ListenerConnections} port: real connections to the test database, with
 * faults switched on and off by the test, and a count of the statements the listener sends.
 *
 * <ul>
 *   <li>{@link #swallowListen}: the LISTEN statement runs as a harmless SELECT, so the connection
 *       never hears anything, self-probes included. This is what a transaction-mode pooler does: it
 *       accepts LISTEN on some server connection and forgets it.
 *   <li>{@link #dropNotifications}: notifications are read from the socket and thrown away while
 *       set: a connection that is up but deaf, which can heal.
 * </ul>
 */
public final class FaultyListenerConnections implements ListenerConnections {

  /** The start of the notifier's LISTEN statement (see Notifier.LISTEN). */
  private static final String LISTEN_PREFIX = "SELECT pgbus.listen(";

  /** Same bind parameters as the LISTEN statement, and no LISTEN. */
  private static final String SWALLOWED_LISTEN =
      "SELECT pg_catalog.cardinality(?::text[]) + pg_catalog.cardinality(?::text[])";

  private final String url;
  private final AtomicLong statements = new AtomicLong();
  private final AtomicLong opened = new AtomicLong();
  private volatile boolean swallowListen;
  private volatile boolean dropNotifications;

  public FaultyListenerConnections(String url) {
    this.url = url;
  }

  /** From the next connection on, LISTEN is swallowed. */
  public FaultyListenerConnections swallowListen(boolean on) {
    swallowListen = on;
    return this;
  }

  /** While on, every notification that arrives is dropped. */
  public FaultyListenerConnections dropNotifications(boolean on) {
    dropNotifications = on;
    return this;
  }

  /** Statements prepared on the listener's connections so far. */
  public long statements() {
    return statements.get();
  }

  /** Connections opened so far. */
  public long opened() {
    return opened.get();
  }

  @Override
  public Connection open() throws SQLException {
    Connection real = DriverManager.getConnection(url);
    opened.incrementAndGet();
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {Connection.class}, new Faulty(real));
  }

  private final class Faulty implements InvocationHandler {
    private final Connection real;

    Faulty(Connection real) {
      this.real = real;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      if (m.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql) {
        statements.incrementAndGet();
        if (swallowListen && sql.startsWith(LISTEN_PREFIX)) {
          return real.prepareStatement(SWALLOWED_LISTEN);
        }
      }
      if (m.getName().equals("unwrap") && args[0] == PGConnection.class) {
        PGConnection pg = real.unwrap(PGConnection.class);
        return Proxy.newProxyInstance(
            getClass().getClassLoader(), new Class<?>[] {PGConnection.class}, deaf(pg));
      }
      try {
        return m.invoke(real, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    private InvocationHandler deaf(PGConnection pg) {
      return (proxy, m, args) -> {
        Object result;
        try {
          result = m.invoke(pg, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
        if (m.getName().equals("getNotifications") && dropNotifications) {
          return new PGNotification[0];
        }
        return result;
      };
    }
  }
}

package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Which connections the schema is migrated over: the JTA datasource, unless it goes through a
 * transaction-mode pooler; then the listener's direct connection ({@code pgbus.listener.url}, or a
 * listener datasource straight at the database).
 *
 * <p>A migration needs a session. {@link Schema#migrate} holds a session advisory lock across the
 * whole run, and Flyway and {@link MigrationDataSource} set a session {@code search_path} and put
 * it back after. Through a transaction-mode pooler each of those statements runs on whichever
 * server connection is free: the lock can stay held on a pooled server connection (the next
 * migrator waits for ever), a migration statement can run without the path, and the restore can
 * miss, leaving {@code pg_catalog, pg_temp} on a server connection where the application's
 * unqualified table names then fail (issue #33).
 */
public final class MigrationRoute {

  private static final System.Logger LOG = System.getLogger(MigrationRoute.class.getName());

  private MigrationRoute() {}

  /**
   * {@code jta} when {@code jtaSession} (what {@link PoolerGuard#inspect} saw on it) is direct;
   * else a datasource over {@code direct}, once one of its connections proved a direct session.
   *
   * @param direct the listener's connections, or null when there are none
   * @throws PgbusException when {@code jta} goes through a pooler and no direct session is at hand:
   *     the message names the evidence and the settings that fix it
   */
  public static DataSource choose(
      PoolerGuard.Session jtaSession, DataSource jta, ListenerConnections direct) {
    if (jtaSession.direct()) {
      return jta;
    }
    String why =
        "pgbus migrates its schema over a session, and the JTA datasource goes through a"
            + " transaction-mode pooler ("
            + jtaSession.describe()
            + "), which keeps no session state (the migration lock, its search_path)";
    String fix =
        ": point pgbus.listener.url (or the listener datasource) at the database itself, and"
            + " pgbus migrates over it; or set pgbus.migrate=false and run `pgbus migrate` with"
            + " the database's own URL (docs/operations.md, \"Behind PgBouncer\")";
    if (direct == null) {
      throw new PgbusException(why + "; there is no listener connection to migrate over" + fix);
    }
    PoolerGuard.Session session;
    try (Connection c = direct.open()) {
      session = PoolerGuard.inspect(c);
    } catch (SQLException e) {
      throw new PgbusException(
          why + "; the listener's connection failed too (" + e.getMessage() + ")" + fix, e);
    }
    if (!session.direct()) {
      throw new PgbusException(
          why
              + "; the listener's connection is not a direct session either ("
              + session.describe()
              + ")"
              + fix);
    }
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus: migrating over the listener''s direct connection, not the JTA datasource ({0})",
        jtaSession.describe());
    return new Direct(direct);
  }

  /** A fresh connection of the port per call; closing it closes (or returns) it. */
  private static final class Direct implements DataSource {
    private final ListenerConnections connections;

    Direct(ListenerConnections connections) {
      this.connections = connections;
    }

    @Override
    public Connection getConnection() throws SQLException {
      return connections.open();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
      throw new SQLFeatureNotSupportedException("the listener's connections take no other user");
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
      // no log writer
    }

    @Override
    public void setLoginTimeout(int seconds) {
      // the port's own
    }

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      if (iface.isInstance(this)) {
        return iface.cast(this);
      }
      throw new SQLException("not a wrapper for " + iface.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return iface.isInstance(this);
    }
  }
}

package io.pgbus.engine;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The data source Flyway migrates through: each connection's {@code search_path} is {@code
 * pg_catalog, pg_temp} while Flyway holds it, and what it was before when Flyway closes it (a
 * pooled connection goes back to the application as it came).
 *
 * <p>Flyway's own catalog queries ({@code nspname = ?} with a varchar bind, {@code rolname ILIKE
 * ...}) resolve operators that pg_catalog does not match exactly; under the application's path a
 * look-alike planted in {@code public} would run with the migrating role's rights, often the
 * schema's owner. The migrations themselves name everything with {@code pgbus.}; Flyway puts {@code
 * pgbus} before this path while it applies them.
 */
final class MigrationDataSource implements DataSource {

  static final String PATH = "pg_catalog, pg_temp";

  private final DataSource delegate;

  MigrationDataSource(DataSource delegate) {
    this.delegate = delegate;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return pinned(delegate.getConnection());
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return pinned(delegate.getConnection(username, password));
  }

  private static Connection pinned(Connection c) throws SQLException {
    String before;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT pg_catalog.current_setting('search_path'),"
                + " pg_catalog.set_config('search_path', ?::text, false)")) {
      ps.setString(1, PATH);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        before = rs.getString(1);
      }
    } catch (SQLException e) {
      c.close();
      throw e;
    }
    return (Connection)
        Proxy.newProxyInstance(
            Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if ("close".equals(method.getName()) && method.getParameterCount() == 0) {
                try {
                  if (!c.isClosed()) {
                    restore(c, before);
                  }
                } finally {
                  c.close();
                }
                return null;
              }
              try {
                return method.invoke(c, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  // Flyway gives its connections back in auto-commit, as it took them (its own close restores
  // that before ours runs), so the setting sticks.
  private static void restore(Connection c, String path) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT pg_catalog.set_config('search_path', ?::text, false)")) {
      ps.setString(1, path);
      ps.executeQuery().close();
    }
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return delegate.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    delegate.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    delegate.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return delegate.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return delegate.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) throws SQLException {
    return iface.isInstance(this) || delegate.isWrapperFor(iface);
  }
}

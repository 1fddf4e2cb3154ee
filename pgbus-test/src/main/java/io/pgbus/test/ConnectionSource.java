package io.pgbus.test;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A {@link DataSource} that only hands out connections: the kit's adapters over one connection or
 * over the running job's transaction. Everything else a DataSource has is left at its neutral
 * value.
 */
abstract class ConnectionSource implements DataSource {

  /** A view of {@code c} whose {@code close()} does nothing: its owner closes it. */
  static Connection borrowed(Connection c) {
    InvocationHandler h =
        (proxy, method, args) -> {
          switch (method.getName()) {
            case "close":
              return null;
            case "isClosed":
              if (method.getParameterCount() == 0) {
                return c.isClosed();
              }
              break;
            default:
              break;
          }
          try {
            return method.invoke(c, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (Connection)
        Proxy.newProxyInstance(
            ConnectionSource.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException(
        "this pgbus-test DataSource hands out its own connections: call getConnection()");
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {}

  @Override
  public void setLoginTimeout(int seconds) {}

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException("no parent logger");
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper of " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}

package io.pgbus.engine;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Connections that run their SQL text in a {@link SchemaName}: every SQL string handed to the
 * connection or to a statement it made passes through {@link SchemaName#sql}. Everything else goes
 * to the connection underneath as it is, {@code unwrap(PGConnection.class)} included (the
 * listener's notifications, the backend pid): a container's handle stays the connection its
 * transaction manager enlisted, only seen through this proxy.
 */
final class SchemaConnections implements InvocationHandler {

  // The methods whose first argument is SQL text.
  private static final Set<String> CONNECTION_SQL =
      Set.of("prepareStatement", "prepareCall", "nativeSQL");
  private static final Set<String> STATEMENT_SQL =
      Set.of("execute", "executeQuery", "executeUpdate", "executeLargeUpdate", "addBatch");

  private final SchemaName schema;
  private final Object target;

  private SchemaConnections(SchemaName schema, Object target) {
    this.schema = schema;
    this.target = target;
  }

  static DataSource wrap(SchemaName schema, DataSource dataSource) {
    if (schema.isDefault() || schema.equals(schemaOf(dataSource))) {
      return dataSource;
    }
    return proxy(DataSource.class, schema, dataSource);
  }

  static Connection wrap(SchemaName schema, Connection c) {
    if (schema.isDefault() || c == null || schema.equals(schemaOf(c))) {
      return c;
    }
    return proxy(Connection.class, schema, c);
  }

  /** The schema {@code o} was wrapped for, or null when it is no such proxy. */
  static SchemaName schemaOf(Object o) {
    return o != null
            && Proxy.isProxyClass(o.getClass())
            && Proxy.getInvocationHandler(o) instanceof SchemaConnections h
        ? h.schema
        : null;
  }

  private static <T> T proxy(Class<T> type, SchemaName schema, Object target) {
    return type.cast(
        Proxy.newProxyInstance(
            SchemaConnections.class.getClassLoader(),
            new Class<?>[] {type},
            new SchemaConnections(schema, target)));
  }

  @Override
  public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
    String name = m.getName();
    switch (name) {
      case "unwrap":
        if (args.length == 1 && ((Class<?>) args[0]).isInstance(proxy)) {
          return proxy;
        }
        break;
      case "isWrapperFor":
        if (args.length == 1 && ((Class<?>) args[0]).isInstance(proxy)) {
          return true;
        }
        break;
      case "equals":
        return args[0] == proxy;
      case "hashCode":
        return System.identityHashCode(proxy);
      case "toString":
        return "pgbus schema " + schema + " over " + target;
      default:
        break;
    }
    boolean sql =
        args != null
            && args.length > 0
            && args[0] instanceof String
            && (target instanceof Connection
                ? CONNECTION_SQL.contains(name)
                : target instanceof Statement && STATEMENT_SQL.contains(name));
    if (sql) {
      args = args.clone();
      args[0] = schema.sql((String) args[0]);
    }
    Object result;
    try {
      result = m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    if (result instanceof Connection c && target instanceof DataSource) {
      return wrap(schema, c); // a connection mapped already (a listener's) is not mapped twice
    }
    // Only a plain Statement takes SQL later; a prepared one got its text already.
    if (m.getReturnType() == Statement.class && result instanceof Statement st) {
      return proxy(Statement.class, schema, st);
    }
    return result;
  }
}

package io.pgbus.engine.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A real datasource that counts the statements made on its connections (each {@code
 * prepareStatement}, {@code prepareCall} or {@code createStatement}: the engine makes one per
 * statement it runs), for tests of what an engine costs the database.
 */
public final class CountingDataSource {

  private static final Set<String> STATEMENTS =
      Set.of("prepareStatement", "prepareCall", "createStatement");

  private final DataSource dataSource;
  private final AtomicLong statements = new AtomicLong();
  private final ConcurrentHashMap<String, Long> bySql = new ConcurrentHashMap<>();

  public CountingDataSource(DataSource real) {
    this.dataSource =
        (DataSource)
            Proxy.newProxyInstance(
                CountingDataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (proxy, m, args) -> {
                  Object result = invoke(m, real, args);
                  return result instanceof Connection c ? counting(c) : result;
                });
  }

  /** The counting datasource. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** Statements made so far. */
  public long statements() {
    return statements.get();
  }

  /** Statements prepared so far, by SQL text: a copy, to compare two moments. */
  public java.util.Map<String, Long> statementsBySql() {
    return java.util.Map.copyOf(bySql);
  }

  /** Statements prepared so far whose SQL text contains {@code fragment}. */
  public long statementsContaining(String fragment) {
    return bySql.entrySet().stream()
        .filter(e -> e.getKey().contains(fragment))
        .mapToLong(e -> e.getValue())
        .sum();
  }

  private Connection counting(Connection real) {
    return (Connection)
        Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, m, args) -> {
              if (STATEMENTS.contains(m.getName())) {
                statements.incrementAndGet();
                if (args != null && args.length > 0 && args[0] instanceof String sql) {
                  bySql.merge(sql, 1L, Long::sum);
                }
              }
              return invoke(m, real, args);
            });
  }

  private static Object invoke(java.lang.reflect.Method m, Object target, Object[] args)
      throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}

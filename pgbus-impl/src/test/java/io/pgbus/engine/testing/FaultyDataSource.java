package io.pgbus.engine.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import javax.sql.DataSource;

/**
 * A datasource that runs a fault before each {@code getConnection} made from one engine class's
 * code (a capsule's claim, the leader election), and leaves every other caller alone: a fake at the
 * engine's database port, for loops that must survive what it throws or how long it blocks.
 */
public final class FaultyDataSource {

  /** What runs before a matching getConnection: it may block, throw, or do nothing. */
  @FunctionalInterface
  public interface Fault {
    void run() throws Throwable;
  }

  private FaultyDataSource() {}

  /**
   * {@code real}, except that a getConnection called from {@code caller} runs {@code fault} first.
   */
  public static DataSource from(DataSource real, Class<?> caller, Fault fault) {
    return (DataSource)
        Proxy.newProxyInstance(
            FaultyDataSource.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (proxy, m, args) -> {
              if (m.getName().equals("getConnection") && calledFrom(caller)) {
                fault.run();
              }
              try {
                return m.invoke(real, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  private static boolean calledFrom(Class<?> caller) {
    return StackWalker.getInstance()
        .walk(frames -> frames.anyMatch(f -> f.getClassName().equals(caller.getName())));
  }
}

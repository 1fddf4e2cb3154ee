package io.pgbus.jakarta;

import java.lang.reflect.InvocationTargetException;
import java.security.PrivilegedExceptionAction;
import java.util.concurrent.Callable;

/**
 * Port: runs work as a named user of the server's own user registry, whose groups and roles the
 * server resolves again, so that {@code @RolesAllowed} and {@code getCallerPrincipal()} in what the
 * work calls see that user. One implementation per server, each reaching the server's API
 * reflectively, so pgbus-impl compiles against Jakarta EE alone: {@link LibertyRunAs} (a hashtable
 * login, then {@code WSSubject.doAs}) and {@link WildFlyRunAs} (Elytron's run-as identity of the
 * deployment's security domain). docs/configuration.md, "Running a handler as the enqueuer".
 */
interface RunAsIdentity {

  /**
   * Runs {@code work} as {@code user}. Throws {@link Refused} before {@code work} starts when the
   * server does not give the identity (no such user, no security domain); whatever {@code work}
   * throws passes through unchanged.
   */
  default <T> T call(String user, Callable<T> work) throws Exception {
    Object identity = identity(user);
    PrivilegedExceptionAction<T> action = work::call;
    try {
      @SuppressWarnings("unchecked")
      T result = (T) enter(identity, action);
      return result;
    } catch (InvocationTargetException e) {
      throw unwrapped(e);
    }
  }

  /** The server's identity of {@code user}, looked up again; {@link Refused} when it has none. */
  Object identity(String user) throws Refused;

  /** Runs {@code action} as {@code identity}, through the server's API (reflectively). */
  Object enter(Object identity, PrivilegedExceptionAction<?> action)
      throws ReflectiveOperationException;

  /** The server this implementation is for, for messages. */
  String server();

  /** The server would not give the identity; the message says why and what fixes it. */
  final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * The implementation for the server this runs on, found through {@code loader}; null when neither
   * server's API is there.
   */
  static RunAsIdentity forThisServer(ClassLoader loader) {
    RunAsIdentity liberty = LibertyRunAs.find(loader);
    return liberty != null ? liberty : WildFlyRunAs.find(loader);
  }

  /** {@code e}'s cause when it is a reflective call's wrapper, rethrown as it is. */
  static Exception unwrapped(Throwable e) {
    Throwable t = e;
    while ((t instanceof InvocationTargetException
            || t instanceof java.security.PrivilegedActionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof Error error) {
      throw error;
    }
    return (Exception) t;
  }
}

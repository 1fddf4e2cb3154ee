package io.pgbus.engine;

import java.text.MessageFormat;
import java.util.logging.Logger;

/**
 * The lines of a stop that an operator must see (which jobs went back), logged so that they are
 * heard while the JVM shuts down. On a SIGTERM, java.util.logging's own shutdown hook resets its
 * handlers while the server is still stopping its applications: on Open Liberty pgbus's drain lines
 * never reached messages.log (issue #32). When the JVM is shutting down and the root logger has no
 * handler left, the line also goes to {@code System.err}, which the server still records; on a
 * server whose logging is still attached (WildFly) it is logged once, as usual.
 */
public final class StopLog {

  private StopLog() {}

  /** Logs through {@code log}, and to {@code System.err} as well when no handler would hear it. */
  public static void log(
      System.Logger log, System.Logger.Level level, String format, Object... args) {
    log.log(level, format, args);
    if (unheard()) {
      System.err.println("pgbus " + level + ": " + MessageFormat.format(format, args));
    }
  }

  private static boolean unheard() {
    if (Logger.getLogger("").getHandlers().length > 0) {
      return false;
    }
    Thread probe = new Thread(() -> {});
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException shuttingDown) {
      return true;
    }
  }
}

package io.pgbus.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A WARNING that untrusted input could repeat at will (a forged NOTIFY: any database login may send
 * one): the first is logged, then at most one line per interval, which says how many were not
 * logged since and shows the last of them. A flood costs a line a minute, not a line each. The line
 * shown is the caller's, built from parsed values only, never the raw untrusted text.
 */
final class ThrottledWarning {

  private final System.Logger log;
  private final Duration interval;
  private final LongSupplier nanoTime;

  // Guarded by this.
  private long loggedAt;
  private boolean loggedOnce;
  private long suppressed;
  private Instant suppressedSince;

  ThrottledWarning(System.Logger log, Duration interval) {
    this(log, interval, System::nanoTime);
  }

  ThrottledWarning(System.Logger log, Duration interval, LongSupplier nanoTime) {
    this.log = Objects.requireNonNull(log);
    this.interval = Objects.requireNonNull(interval);
    this.nanoTime = Objects.requireNonNull(nanoTime);
  }

  /**
   * One occurrence; {@code line} describes it. Logged now if none was within the interval (with the
   * count of those not logged before it), else only counted.
   */
  void warn(String line) {
    long now = nanoTime.getAsLong();
    long notLogged;
    Instant since;
    synchronized (this) {
      if (loggedOnce && now - loggedAt < interval.toNanos()) {
        if (suppressed++ == 0) {
          suppressedSince = Instant.now();
        }
        return;
      }
      loggedOnce = true;
      loggedAt = now;
      notLogged = suppressed;
      since = suppressedSince;
      suppressed = 0;
    }
    if (notLogged == 0) {
      log.log(
          System.Logger.Level.WARNING,
          "{0} (more like it are logged at most once every {1} s)",
          line,
          Long.toString(interval.toSeconds()));
    } else {
      log.log(
          System.Logger.Level.WARNING,
          "{0}; and {1} more like it since {2} that were not logged",
          line,
          Long.toString(notLogged),
          String.valueOf(since));
    }
  }

  /** Occurrences counted since the last line, not logged (yet). */
  synchronized long suppressed() {
    return suppressed;
  }
}

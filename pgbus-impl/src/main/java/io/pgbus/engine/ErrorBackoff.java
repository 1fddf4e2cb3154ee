package io.pgbus.engine;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How an engine loop meets a failed round, the same in every loop: the loop catches {@code
 * Exception} at its edge (never inside a round), asks this how long to wait, sleeps on its {@link
 * WakeSignal}, which only a stop cuts short (see {@link Loop#backOff}), and carries on. No
 * exception ends a loop; only a stop or an interrupt does.
 *
 * <p>A database failure is expected (a restart, an outage) and logged as a warning with its
 * message. Anything else is a bug or a broken port, and is logged at ERROR with its stack trace,
 * naming the loop: issue #10 found a claim loop that died silently from one ArithmeticException.
 * The wait doubles from {@code min} to {@code max} while rounds keep failing, with jitter so the
 * loops of many JVMs do not retry in step, and starts again at {@code min} after a round succeeds.
 *
 * <p>Retries outside a loop wait the same way ({@link #waits}, {@link #nextWait}): the recording of
 * a job's failure while the database is away, and the runtime's bootstrap.
 *
 * <p>Used by one thread at a time; {@link #failingFor()} may be read from any thread.
 */
public final class ErrorBackoff {

  private static final System.Logger LOG = System.getLogger(ErrorBackoff.class.getName());

  private final String loop;
  private final long minMs;
  private final long maxMs;
  private final Runnable onConnectionError;
  private long nextMs;
  private volatile long failingSinceNanos;
  private volatile boolean failing;

  /**
   * @param loop how messages name the loop, e.g. {@code "pgbus capsule 'main'"}
   * @param onConnectionError told when a round lost the database (see {@link #connectionError})
   */
  ErrorBackoff(String loop, Duration min, Duration max, Runnable onConnectionError) {
    this.loop = loop;
    this.minMs = Math.max(1, min.toMillis());
    this.maxMs = Math.max(minMs, max.toMillis());
    this.onConnectionError = onConnectionError;
    this.nextMs = minMs;
  }

  /**
   * The waits of a retry whose caller logs its failures in its own words: {@link #nextWait} after
   * each failure, from {@code min} doubling to {@code max}, jittered.
   */
  public static ErrorBackoff waits(Duration min, Duration max) {
    return new ErrorBackoff("pgbus", min, max, () -> {});
  }

  /** Records a failure without logging it; how many milliseconds to wait before the next try. */
  public long nextWait() {
    if (!failing) {
      failingSinceNanos = System.nanoTime();
      failing = true;
    }
    long waitMs = Math.min(maxMs, jitter(nextMs));
    nextMs = Math.min(maxMs, nextMs * 2);
    return waitMs;
  }

  /** Records a failed round, logs it, and returns how many milliseconds to wait before the next. */
  long failed(Exception e) {
    long waitMs = nextWait();
    if (isDatabaseError(e)) {
      LOG.log(
          System.Logger.Level.WARNING,
          "{0} failed: {1}; retrying in {2} ms",
          loop,
          e.getMessage(),
          waitMs);
    } else {
      LOG.log(
          System.Logger.Level.ERROR,
          loop + " met an unexpected " + e + "; it carries on in " + waitMs + " ms",
          e);
    }
    if (connectionError(e)) {
      try {
        onConnectionError.run();
      } catch (RuntimeException hookFailure) {
        LOG.log(
            System.Logger.Level.ERROR, loop + ": the connection-error hook failed", hookFailure);
      }
    }
    return waitMs;
  }

  /** A round succeeded: the next failure waits {@code min} again. */
  public void succeeded() {
    nextMs = minMs;
    failing = false;
  }

  /** How long rounds have failed in a row, or zero when the last one succeeded. */
  Duration failingFor() {
    return failing ? Duration.ofNanos(System.nanoTime() - failingSinceNanos) : Duration.ZERO;
  }

  /** Whether {@code t} (or a cause) is an SQL failure: expected, unlike a bug. */
  static boolean isDatabaseError(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether {@code t} (or a cause) says the connection or the server is gone or not back yet:
   * SQLSTATE class 08 (connection exception: refused, broken, I/O error), 57P01-57P03 (admin or
   * crash shutdown, cannot connect now: the server is starting up or in recovery).
   */
  static boolean connectionError(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException e && e.getSQLState() != null) {
        String state = e.getSQLState();
        if (state.startsWith("08") || state.startsWith("57P")) {
          return true;
        }
      }
    }
    return false;
  }

  /** {@code millis} spread over 50-150%, at least 1. */
  static long jitter(long millis) {
    return Math.max(1, Math.round(millis * (0.5 + ThreadLocalRandom.current().nextDouble())));
  }
}

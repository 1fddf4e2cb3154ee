package io.pgbus.engine.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Waits for a condition with a deadline, re-checking it every few milliseconds. This is how tests
 * wait for the engine: on the state they expect, never on a sleep of a guessed length.
 */
public final class Await {

  private static final long CHECK_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  /** A check that may fail with a checked exception (SQL, mostly). */
  @FunctionalInterface
  public interface Check<T> {
    T get() throws Exception;
  }

  private Await() {}

  /** Waits until {@code condition} holds; fails naming {@code what} after {@code timeout}. */
  public static void until(String what, Duration timeout, Check<Boolean> condition) {
    until(what, timeout, condition, Boolean.TRUE::equals);
  }

  /** Waits until {@code accept} holds for {@code value}'s result and returns that result. */
  public static <T> T until(String what, Duration timeout, Check<T> value, Predicate<T> accept) {
    long deadline = System.nanoTime() + timeout.toNanos();
    T last = null;
    Exception lastError = null;
    while (true) {
      try {
        last = value.get();
        lastError = null;
        if (accept.test(last)) {
          return last;
        }
      } catch (Exception e) {
        lastError = e;
      }
      if (System.nanoTime() - deadline >= 0) {
        var failure =
            new AssertionError(
                "timed out after " + timeout + " waiting for " + what + "; last value: " + last);
        if (lastError != null) {
          failure.initCause(lastError);
        }
        throw failure;
      }
      try {
        TimeUnit.NANOSECONDS.sleep(CHECK_EVERY_NANOS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      }
    }
  }
}

package io.pgbus.it.support;

import java.time.Duration;
import java.util.concurrent.Callable;

/** Waits for a condition with a deadline; the failure message says what was awaited. */
public final class Await {
  private Await() {}

  public static void until(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (Boolean.TRUE.equals(condition.call())) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(10);
    }
  }
}

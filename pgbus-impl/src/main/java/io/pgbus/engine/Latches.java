package io.pgbus.engine;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Waiting for a loop to finish, the same way everywhere: bounded, and keeping the interrupt. */
final class Latches {
  private Latches() {}

  /** Waits up to {@code timeout}; false on timeout or interrupt (the flag is restored). */
  static boolean await(CountDownLatch latch, Duration timeout) {
    try {
      return latch.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}

package io.pgbus.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Sleeps that keep the interrupt flag, for the bench's pacing loops. */
final class Sleep {
  private Sleep() {}

  static void millis(long ms) {
    until(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms));
  }

  /** Parks until {@code deadline} (System.nanoTime), or returns early on interrupt. */
  static void until(long deadline) {
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0 || Thread.currentThread().isInterrupted()) {
        return;
      }
      LockSupport.parkNanos(left);
    }
  }
}

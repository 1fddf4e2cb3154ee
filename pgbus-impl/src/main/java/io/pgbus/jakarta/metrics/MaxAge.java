package io.pgbus.jakarta.metrics;

import java.time.Duration;

/**
 * When a gauge's cached read is due again: at the first scrape, then once it is older than its max
 * age. Not thread-safe: its cache calls it under its own lock.
 */
final class MaxAge {

  private final long maxAgeNanos;
  private long readAt;
  private boolean read;

  MaxAge(Duration maxAge) {
    this.maxAgeNanos = maxAge.toNanos();
  }

  /**
   * Whether a read is due; when it is, counts it as made now (a failed read waits its turn too).
   */
  boolean due() {
    long now = System.nanoTime();
    if (read && now - readAt <= maxAgeNanos) {
      return false;
    }
    read = true;
    readAt = now;
    return true;
  }
}

package io.pgbus.engine;

import java.time.Duration;

/**
 * The interval of a periodic task that backs off while idle: each round that makes no progress
 * doubles the interval, up to ten times the base; a round that makes progress snaps back to the
 * base. An idle leader thus pays a tenth of the base rate within a few rounds (2.5 minutes for the
 * archive's 10 s: it took 9 when each round added one base interval), and a busy one reacts at full
 * speed.
 */
final class IdleBackoff {

  static final int MAX_FACTOR = 10;

  private final Duration base;
  private int factor = 1;

  IdleBackoff(Duration base) {
    this.base = base;
  }

  /** Records a round's progress (rows changed) and returns the wait before the next round. */
  synchronized Duration next(long progress) {
    factor = progress > 0 ? 1 : Math.min(MAX_FACTOR, factor * 2);
    return base.multipliedBy(factor);
  }

  /** Back to the base interval, for example on becoming leader. */
  synchronized void reset() {
    factor = 1;
  }

  Duration base() {
    return base;
  }

  synchronized int factor() {
    return factor;
  }
}

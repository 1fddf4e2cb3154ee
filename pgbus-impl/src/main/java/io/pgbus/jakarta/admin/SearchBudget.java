package io.pgbus.jakarta.admin;

import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * How many payload searches each user of the admin API may start: a token bucket per principal
 * name, {@value #BURST} at once and then one a second, in each JVM (issue #23: 200 guesses at a
 * masked PIN took 5.7 s). A user over the budget gets a 429 with {@code Retry-After}. At most
 * {@value #MAX_USERS} users are tracked; past that, the users who may search now are forgotten (a
 * fresh budget for them), never one who is held back.
 */
final class SearchBudget {

  /** Searches a user may start at once. */
  static final int BURST = 10;

  /** Searches a user's budget regains per second. */
  static final double PER_SECOND = 1.0;

  static final int MAX_USERS = 10_000;

  private static final double NANOS = 1_000_000_000.0;

  private final LongSupplier nanoTime;
  private final Map<String, Bucket> buckets = new HashMap<>();

  SearchBudget(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
  }

  private static final class Bucket {
    double tokens = BURST;
    long at;

    Bucket(long at) {
      this.at = at;
    }

    void refill(long now) {
      tokens = Math.min(BURST, tokens + (now - at) / NANOS * PER_SECOND);
      at = now;
    }
  }

  /**
   * Takes one search from {@code user}'s budget: 0 when the search may run, else the whole seconds
   * (at least 1) until the budget holds one again.
   */
  synchronized long take(String user) {
    long now = nanoTime.getAsLong();
    Bucket b = buckets.get(user);
    if (b == null) {
      if (buckets.size() >= MAX_USERS) {
        forgetUnheld(now);
      }
      b = new Bucket(now);
      buckets.put(user, b);
    }
    b.refill(now);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, (long) Math.ceil((1 - b.tokens) / PER_SECOND));
  }

  private void forgetUnheld(long now) {
    buckets
        .values()
        .removeIf(
            b -> {
              b.refill(now);
              return b.tokens >= 1;
            });
    if (buckets.size() >= MAX_USERS) {
      buckets.clear(); // 10,000 users held back at once: start over rather than grow
    }
  }
}

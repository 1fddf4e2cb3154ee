package io.pgbus.engine;

import java.time.Instant;
import java.util.Map;
import java.util.Set;

/**
 * A wake-up for capsules, built from one batch of notifications.
 *
 * @param now queues that have a job to run now
 * @param later queues that got a job due later, with the earliest due time
 * @param everyone a synthetic wake for every capsule, sent after the listener (re)connects, because
 *     LISTEN never replays what was sent while it was away
 */
public record Wake(Set<String> now, Map<String, Instant> later, boolean everyone) {

  public Wake {
    now = Set.copyOf(now);
    later = Map.copyOf(later);
  }

  public static Wake all() {
    return new Wake(Set.of(), Map.of(), true);
  }

  /** Every queue this wake names. */
  public boolean concerns(String queue) {
    return everyone || now.contains(queue) || later.containsKey(queue);
  }
}

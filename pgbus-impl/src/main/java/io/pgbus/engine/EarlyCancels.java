package io.pgbus.engine;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Cancel requests heard for attempts not running here (yet): a job is {@code running} from its
 * claim on, but its handler starts a little later (a batch's last job much later), and a request
 * heard in between must still reach it. Checked when a handler starts. Unconfirmed (requests for
 * other JVMs' jobs land here too, and forged ones: any login may NOTIFY), so bounded: the least
 * recently heard request goes first, and a flood of others pushes out only what is older than it,
 * never a request heard just before it (the map used to be cleared whole when full).
 */
final class EarlyCancels {

  /** How many requests are kept. */
  static final int MAX = 1024;

  private final Map<Long, Integer> byJob;

  EarlyCancels() {
    this(MAX);
  }

  EarlyCancels(int max) {
    // Access order: a request heard again (a repeated NOTIFY) becomes the most recent one.
    this.byJob =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<Long, Integer> eldest) {
            return size() > max;
          }
        };
  }

  /** Remembers a request; the least recently heard one goes when more than the bound are kept. */
  synchronized void heard(CancelRequest request) {
    byJob.put(request.id(), request.attempt());
  }

  /** Whether a request for this attempt was heard; it is forgotten either way. */
  synchronized boolean take(long id, int attempt) {
    return !byJob.isEmpty() && byJob.remove(id, attempt);
  }

  synchronized int size() {
    return byJob.size();
  }

  synchronized boolean contains(long id, int attempt) {
    return Integer.valueOf(attempt).equals(byJob.get(id));
  }
}

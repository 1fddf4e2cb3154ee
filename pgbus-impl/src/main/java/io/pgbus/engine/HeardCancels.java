package io.pgbus.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The well-formed cancel requests the {@link Notifier} heard and has not handed on yet. They are
 * handed on together, at most once every {@link #GAP}, and each distinct one once: the runner
 * checks the requests for attempts it runs against the database in one statement, so a flood of
 * forged NOTIFYs (any login may send them) costs the database at most one statement per gap, not
 * one per notification. A request heard after a quiet gap is handed on at once, so a real cancel
 * waits for nothing. Used on the notifier's thread only, but for {@link #handedOn}.
 */
final class HeardCancels {

  /** The shortest time between two hand-ons: at most 10 cancel checks a second. */
  static final Duration GAP = Duration.ofMillis(100);

  /** How many distinct requests wait at most; beyond, the oldest goes (a flood's, then). */
  static final int MAX_PENDING = 4096;

  private static final System.Logger LOG = System.getLogger(HeardCancels.class.getName());

  private final Consumer<List<CancelRequest>> handler;
  private final LinkedHashSet<CancelRequest> pending = new LinkedHashSet<>();
  private final AtomicLong handedOn = new AtomicLong();
  private long handedOnAt = System.nanoTime() - GAP.toNanos();

  HeardCancels(Consumer<List<CancelRequest>> handler) {
    this.handler = Objects.requireNonNull(handler);
  }

  void heard(CancelRequest request) {
    if (pending.add(request) && pending.size() > MAX_PENDING) {
      Iterator<CancelRequest> oldest = pending.iterator();
      oldest.next();
      oldest.remove();
    }
  }

  /** Milliseconds until the waiting requests are due, 0 when they are; -1 when none waits. */
  long dueInMs(long now) {
    if (pending.isEmpty()) {
      return -1;
    }
    long left = handedOnAt + GAP.toNanos() - now;
    return left <= 0 ? 0 : Math.max(1, left / 1_000_000);
  }

  /** Hands the waiting requests on, if the gap since the last hand-on has passed. */
  void handOnIfDue(long now) {
    if (pending.isEmpty() || now - handedOnAt < GAP.toNanos()) {
      return;
    }
    var requests = List.copyOf(new ArrayList<>(pending));
    pending.clear();
    handedOnAt = now;
    try {
      handler.accept(requests);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "pgbus listener: handling cancel requests failed", e);
    } finally {
      handedOn.addAndGet(requests.size());
    }
  }

  /** Distinct requests handed on so far (whatever became of them). */
  long handedOn() {
    return handedOn.get();
  }
}

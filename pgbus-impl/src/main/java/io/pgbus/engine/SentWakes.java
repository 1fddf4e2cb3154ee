package io.pgbus.engine;

import java.util.ArrayDeque;
import java.util.Collection;

/**
 * The wakes this JVM's {@link WakeSender} just sent, so that its own listener can tell their echo
 * from a wake: the committed transaction woke this JVM's capsules in-process already, and a claim
 * on the echo finds nothing (about one empty claim per job in-process, before this book).
 *
 * <p>PostgreSQL tells a listener the backend that sent each notification. The sender records the
 * backend of its pooled connection (pgjdbc knows it from the connection's start, no round trip) and
 * the queues of the statement, before it runs. The listener drops a notification of a queue only
 * while an unspent record of that backend and queue, at most {@link #TTL} old, is there, and spends
 * it: one record, one echo. Any other backend's wake, and a second wake of the same queue through
 * the same pooled backend (another transaction of this JVM), still wakes. A record whose NOTIFY
 * never came (a paused queue, a failed send) expires; if within its second another transaction of
 * this JVM, through the same backend, notified the same queue from SQL alone, its capsules are left
 * to the next wake or poll: the cost of a rare miss is bounded by {@code pgbus.poll-ceiling}, as
 * for any lost wake.
 */
final class SentWakes {

  /** How long a record waits for its echo. */
  static final long TTL_NANOS = 1_000_000_000L;

  /** The most records kept; past it the oldest go (a flood of sends must not grow the heap). */
  static final int MAX = 4_096;

  private record Sent(int pid, String queue, long at) {}

  private final ArrayDeque<Sent> sent = new ArrayDeque<>(); // guarded by this, oldest first
  private long echoes; // guarded by this

  /** Records a send of {@code queues} through backend {@code pid}, before it runs. */
  synchronized void sending(int pid, Collection<String> queues) {
    long now = System.nanoTime();
    expire(now);
    for (String q : queues) {
      if (sent.size() == MAX) {
        sent.pollFirst();
      }
      sent.addLast(new Sent(pid, q, now));
    }
  }

  /** Whether a notification of {@code queue} from backend {@code pid} is an echo; spends it. */
  synchronized boolean echo(int pid, String queue) {
    if (sent.isEmpty()) {
      return false;
    }
    expire(System.nanoTime());
    var it = sent.iterator();
    while (it.hasNext()) {
      Sent s = it.next();
      if (s.pid() == pid && s.queue().equals(queue)) {
        it.remove();
        echoes++;
        return true;
      }
    }
    return false;
  }

  /** Notifications dropped as echoes so far. */
  synchronized long echoes() {
    return echoes;
  }

  private void expire(long now) {
    while (!sent.isEmpty() && now - sent.peekFirst().at() > TTL_NANOS) {
      sent.pollFirst();
    }
  }
}

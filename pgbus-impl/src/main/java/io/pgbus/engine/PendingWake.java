package io.pgbus.engine;

import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The wake one transaction owes the workers for what it enqueued: its queues, each with the
 * earliest due time of its jobs. Delivered once, after the commit ({@link #committed}); a rolled
 * back transaction drops it, so no worker ever hears of a job that does not exist. In auto-commit
 * each enqueue's statement is its own transaction, and an {@link #immediate} one delivers after
 * each statement ({@link #statementDone}).
 */
public final class PendingWake {

  private final Consumer<Wake> delivery;
  private final boolean immediate;
  private final Set<String> now = new HashSet<>(); // guarded by this
  private final Map<String, Instant> later = new HashMap<>(); // guarded by this

  private PendingWake(Consumer<Wake> delivery, boolean immediate) {
    this.delivery = Objects.requireNonNull(delivery, "delivery");
    this.immediate = immediate;
  }

  /** A wake collected until {@link #committed}. */
  public static PendingWake atCommit(Consumer<Wake> delivery) {
    return new PendingWake(delivery, false);
  }

  /** A wake for enqueues that commit with their own statement: each {@link #statementDone}. */
  public static PendingWake immediate(Consumer<Wake> delivery) {
    return new PendingWake(delivery, true);
  }

  /** A job of {@code queue} was enqueued, due at {@code due} (null: now). */
  public void add(String queue, Instant due) {
    Objects.requireNonNull(queue, "queue");
    synchronized (this) {
      if (due == null || !due.isAfter(Instant.now())) {
        now.add(queue);
        later.remove(queue);
      } else if (!now.contains(queue)) {
        later.merge(queue, due, (a, b) -> a.isBefore(b) ? a : b);
      }
    }
  }

  /** An enqueue's statement succeeded: in auto-commit it committed, and its wake goes now. */
  public void statementDone() {
    if (immediate) {
      committed();
    }
  }

  /** The transaction committed: delivers what was collected, once. */
  public void committed() {
    Wake wake;
    synchronized (this) {
      if (now.isEmpty() && later.isEmpty()) {
        return;
      }
      wake = new Wake(now, later, false);
      now.clear();
      later.clear();
    }
    delivery.accept(wake);
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * The safety net under the listener: one statement per tick for the whole JVM, however many
 * capsules and queues, reads the head of every queue and wakes only the capsules whose queues have
 * a job due now, and sets alarms for jobs due later.
 *
 * <p>It ticks at the slow {@code pollCeiling} while the listener delivers and at {@code
 * pollInterval} while it does not, and switches at once when the listener changes state. It also
 * polls on demand: after every listener (re)connect, since LISTEN never replays.
 */
final class Poller extends Loop {

  private final JobStore store;
  private final DataSource dataSource;
  private final List<String> queues;
  private final Supplier<ListenerState> listener;
  private final PollerConfig config;
  private final Consumer<Wake> route;
  private final ReentrantLock lock = signal().lock();
  private final AtomicLong polls = new AtomicLong();
  private final ErrorBackoff errors;

  private boolean pollNow = true; // guarded by lock
  private long lastPoll = System.nanoTime(); // only the loop's thread

  Poller(
      JobStore store,
      DataSource dataSource,
      List<String> queues,
      Supplier<ListenerState> listener,
      PollerConfig config,
      Consumer<Wake> route,
      Runnable onConnectionError) {
    this.errors =
        new ErrorBackoff(
            "pgbus poll of " + queues,
            Duration.ofMillis(100),
            config.interval().multipliedBy(10),
            onConnectionError);
    this.store = Objects.requireNonNull(store);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.queues = List.copyOf(queues);
    this.listener = Objects.requireNonNull(listener);
    this.config = Objects.requireNonNull(config);
    this.route = Objects.requireNonNull(route);
  }

  /** Poll statements issued. */
  long polls() {
    return polls.get();
  }

  /** Polls as soon as possible. */
  void pollNow() {
    lock.lock();
    try {
      pollNow = true;
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /** Re-reads the interval, for example after the listener changed state. */
  void nudge() {
    signal().signal();
  }

  @Override
  protected void loop() throws InterruptedException {
    runRounds(this::pollWhenDue, errors, this::pollNow);
  }

  /** Waits until a poll is due or asked for, then polls; false when the poller stops. */
  private boolean pollWhenDue() throws Exception {
    lock.lock();
    try {
      while (true) {
        if (stopping()) {
          return false;
        }
        Duration every = listener.get().delivering() ? config.ceiling() : config.interval();
        long left = lastPoll + every.toNanos() - System.nanoTime();
        if (pollNow || left <= 0) {
          break;
        }
        signal().await(left);
      }
      pollNow = false;
    } finally {
      lock.unlock();
    }
    lastPoll = System.nanoTime();
    poll();
    return true;
  }

  private void poll() throws Exception {
    Map<String, JobStore.QueueHead> heads;
    try (Connection c = dataSource.getConnection()) {
      heads = store.jobQueueHeads(c, queues);
    }
    polls.incrementAndGet();
    var now = new HashSet<String>();
    var later = new HashMap<String, Instant>();
    heads.forEach(
        (queue, head) -> {
          if (head.due()) {
            now.add(queue);
          } else {
            later.put(queue, head.runAt());
          }
        });
    if (!now.isEmpty() || !later.isEmpty()) {
      route.accept(new Wake(now, later, false));
    }
  }
}

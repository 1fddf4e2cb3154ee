package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
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
 * The JVM's one periodic statement, the tick: it polls (the safety net under the listener), beats
 * (the JVM's heartbeat), probes (the listener's self-probe) and reads the leader's lease, one
 * statement per tick for the whole JVM ({@code pgbus.tick}, see {@link NodeStore#nodeTick}),
 * however many capsules and queues. It reads the head of every queue and wakes only the capsules
 * whose queues have a job due now, and sets alarms for jobs due later; in the same statement it
 * renews this node's row and the leases of the jobs this JVM runs (a beat), carries the listener's
 * self-probe NOTIFY when one is wanted, and reads the maintenance leader's lease for the {@link
 * Elector}. So an idle follower JVM issues this one statement per poll ceiling and nothing else.
 *
 * <p>It ticks at the slow {@code pollCeiling} while the listener delivers and at {@code
 * pollInterval} while it does not, and switches at once when the listener changes state; while jobs
 * run it ticks at least every heartbeat interval (a third of {@code pgbus.heartbeat.ttl}). A tick
 * beats when the last beat is a heartbeat interval old, so a degraded listener's fast polls do not
 * rewrite rows every second. It also ticks on demand: after every listener (re)connect, since
 * LISTEN never replays, and when a job starts in an idle JVM.
 */
final class Ticker extends Loop {

  private final NodeStore store = new NodeStore();
  private final DataSource dataSource;
  private final Heartbeat heartbeat;
  private final List<String> queues;
  private final Supplier<ListenerState> listener;
  private final TickerConfig config;
  private final Consumer<Wake> route;
  private final ReentrantLock lock = signal().lock();
  private final AtomicLong ticks = new AtomicLong();
  private final ErrorBackoff errors;

  private boolean tickNow = true; // guarded by lock
  private boolean tickSoon; // guarded by lock
  private volatile TickHook beforeTick = c -> {};
  private long lastPoll = System.nanoTime(); // only the loop's thread
  private long lastBeat = System.nanoTime() - Long.MAX_VALUE / 2; // only the loop's thread

  /**
   * What rides on a tick besides the poll.
   *
   * @param workerId this node's row
   * @param every how often a JVM that runs jobs beats (a third of the TTL)
   * @param lease what a beat renews a running job's lease to
   * @param alive the jobs this JVM vouches for now
   * @param probe the listener's self-probe, or null without a listener
   * @param leaderName the leader lease to read, or null when this engine does not take part
   * @param seen hears every tick's result, on the ticker's thread
   */
  record Heartbeat(
      String workerId,
      Duration every,
      Duration lease,
      Supplier<List<ClaimedJob>> alive,
      Notifier probe,
      String leaderName,
      Consumer<NodeStore.Tick> seen) {}

  Ticker(
      Heartbeat heartbeat,
      DataSource dataSource,
      List<String> queues,
      Supplier<ListenerState> listener,
      TickerConfig config,
      Consumer<Wake> route,
      Runnable onConnectionError) {
    this.errors =
        new ErrorBackoff(
            "pgbus poll of " + queues,
            Duration.ofMillis(100),
            config.errorBackoffCeiling(),
            onConnectionError);
    this.heartbeat = Objects.requireNonNull(heartbeat);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.queues = List.copyOf(queues);
    this.listener = Objects.requireNonNull(listener);
    this.config = Objects.requireNonNull(config);
    this.route = Objects.requireNonNull(route);
  }

  /** Tick statements issued. */
  long ticks() {
    return ticks.get();
  }

  /** Ticks as soon as possible. */
  void tickNow() {
    lock.lock();
    try {
      tickNow = true;
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The shortest time between the last tick and one that {@link #tickSoon} asks for: a burst of
   * NOTIFYs, which anyone may send, makes at most one tick per gap, and none is ever dropped.
   */
  static final Duration SOON_GAP = Duration.ofMillis(250);

  /**
   * Ticks at once, or {@link #SOON_GAP} after the last tick if that is later: for a change that
   * someone announced (a queue's limits or pause), which the tick's {@link #beforeEachTick} hook
   * re-reads and whose queues the tick's heads then wake.
   */
  void tickSoon() {
    lock.lock();
    try {
      tickSoon = true;
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /** Work that rides on every tick, on its connection, before the poll; set before start. */
  void beforeEachTick(TickHook hook) {
    beforeTick = Objects.requireNonNull(hook);
  }

  /** See {@link #beforeEachTick}. */
  interface TickHook {
    void run(Connection c) throws SQLException;
  }

  /** Re-reads the interval, for example after the listener changed state. */
  void nudge() {
    signal().signal();
  }

  @Override
  protected void loop() throws InterruptedException {
    runRounds(this::tickWhenDue, errors, this::tickNow);
  }

  /** Waits until a tick is due or asked for, then ticks; false when the ticker stops. */
  private boolean tickWhenDue() throws Exception {
    lock.lock();
    try {
      while (true) {
        if (stopping()) {
          return false;
        }
        Duration every = listener.get().delivering() ? config.ceiling() : config.interval();
        long now = System.nanoTime();
        long left = lastPoll + every.toNanos() - now;
        if (!heartbeat.alive().get().isEmpty()) {
          left = Math.min(left, lastBeat + heartbeat.every().toNanos() - now);
        }
        if (tickSoon) {
          left = Math.min(left, lastPoll + SOON_GAP.toNanos() - now);
        }
        if (tickNow || left <= 0) {
          break;
        }
        signal().await(left);
      }
      tickNow = false;
      tickSoon = false; // this tick re-reads whatever was announced
    } finally {
      lock.unlock();
    }
    lastPoll = System.nanoTime();
    poll();
    return true;
  }

  private void poll() throws Exception {
    long started = System.nanoTime();
    // A beat at every tick that is a beat interval after the last (an idle JVM's every tick).
    boolean beat = started - lastBeat >= heartbeat.every().toNanos() * 9 / 10;
    List<ClaimedJob> alive = beat ? heartbeat.alive().get() : List.of();
    NodeStore.Tick tick;
    Notifier probe = heartbeat.probe();
    try (Connection c = dataSource.getConnection()) {
      beforeTick.run(c);
      String payload = probe == null ? null : probe.probeToSend();
      try {
        tick =
            store.nodeTick(
                c,
                queues,
                heartbeat.workerId(),
                beat,
                alive,
                heartbeat.lease(),
                payload == null ? null : probe.probeChannel(),
                payload,
                heartbeat.leaderName());
      } catch (SQLException | RuntimeException e) {
        if (payload != null) {
          probe.probeNotSent(payload);
        }
        throw e;
      }
    }
    if (beat) {
      lastBeat = started;
    }
    ticks.incrementAndGet();
    heartbeat.seen().accept(tick);
    Map<String, JobStore.QueueHead> heads = tick.heads();
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

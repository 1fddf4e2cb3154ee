package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Owns the one LISTEN connection of this JVM and turns notifications into {@link Wake}s.
 *
 * <p>Invariants, each learned the hard way by a peer:
 *
 * <ul>
 *   <li>Only the notifier's own thread touches its connection, including the close. Closing it
 *       from another thread during undeploy crashed a peer; {@link #stop} only asks.
 *   <li>{@code getNotifications} is always called with a finite timeout: with 0 it never returns
 *       when the connection dies. The timeout also bounds how long a stop waits.
 *   <li>The connection stays in auto-commit: pgjdbc delivers nothing while it is in a transaction.
 *   <li>A connected listener can still be deaf (a transaction-mode pooler accepts LISTEN and never
 *       delivers). A self-probe, a NOTIFY to a private channel, proves delivery at start and then
 *       every {@code probeInterval}; a probe that misses {@code probeTimeout} means DEGRADED.
 *   <li>LISTEN never replays. After every (re)connect, once LISTEN is in place, everyone gets a
 *       synthetic wake so the database is re-read.
 * </ul>
 */
public final class Notifier implements Runnable {

  /** The {@code application_name} of the listener's backend, so operators can find it. */
  public static final String APPLICATION_NAME = "pgbus-listener";

  private static final System.Logger LOG = System.getLogger(Notifier.class.getName());

  /** The getNotifications timeout: bounds stop latency and dead-socket detection. */
  private static final int RECEIVE_TIMEOUT_MS = 250;

  /** While degraded, probe this often so recovery is noticed quickly. */
  private static final Duration DEGRADED_PROBE_INTERVAL = Duration.ofSeconds(5);

  /** A statement on the listener connection that takes longer than this counts as a dead socket. */
  private static final int NETWORK_TIMEOUT_MS = 30_000;

  private static final String SET_NAME = "SELECT set_config('application_name', ?, false)";
  private static final String LISTEN =
      "SELECT pgbus.listen(ARRAY(SELECT pgbus.channel(q) FROM unnest(?::text[]) AS q) || ?::text)";
  private static final String PROBE = "SELECT pg_notify(?, ?)";

  private final ListenerConnections connections;
  private final List<String> queues;
  private final Consumer<Wake> wakes;
  private final Consumer<ListenerState> states;
  private final EngineConfig config;
  private final String probeChannel;
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicLong connects = new AtomicLong();
  private final AtomicLong notifications = new AtomicLong();

  private volatile ListenerState state = ListenerState.STARTING;
  private volatile boolean stopping;
  private volatile String lastError;

  public Notifier(
      ListenerConnections connections,
      List<String> queues,
      Consumer<Wake> wakes,
      Consumer<ListenerState> states,
      EngineConfig config) {
    this.connections = Objects.requireNonNull(connections, "connections");
    this.queues = List.copyOf(queues);
    this.wakes = Objects.requireNonNull(wakes, "wakes");
    this.states = Objects.requireNonNull(states, "states");
    this.config = Objects.requireNonNull(config, "config");
    this.probeChannel =
        "pgbusprobe_" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
  }

  public ListenerState state() {
    return state;
  }

  /** How many times a connection was established (1 after a clean start). */
  public long connects() {
    return connects.get();
  }

  /** Notifications received, probes excluded. */
  public long notifications() {
    return notifications.get();
  }

  /** The last connection or probe problem, for health output; null when none. */
  public String lastError() {
    return lastError;
  }

  /** Asks the loop to stop and waits up to {@code timeout} for it; the loop closes the connection. */
  public boolean stop(Duration timeout) {
    stopping = true;
    try {
      return finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public void run() {
    long backoffMs = config.reconnectMin().toMillis();
    try {
      while (!stopping) {
        try (Connection c = connections.open()) {
          listen(c);
          connects.incrementAndGet();
          backoffMs = config.reconnectMin().toMillis();
          // LISTEN is in place: anything committed from now on is notified, and this wake makes
          // every capsule re-read what was committed before (or while we were away).
          wakes.accept(Wake.all());
          receive(c);
        } catch (SQLException | RuntimeException e) {
          if (stopping) {
            break;
          }
          lastError = e.getMessage();
          setState(ListenerState.RECONNECTING);
          long sleep = jitter(backoffMs);
          LOG.log(
              System.Logger.Level.WARNING,
              "pgbus listener connection failed ({0}); reconnecting in {1} ms",
              e.getMessage(),
              sleep);
          if (!pause(sleep)) {
            break;
          }
          backoffMs = Math.min(config.reconnectMax().toMillis(), backoffMs * 2);
        }
      }
    } finally {
      setState(ListenerState.STOPPED);
      finished.countDown();
    }
  }

  private void listen(Connection c) throws SQLException {
    c.setAutoCommit(true);
    try {
      c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MS);
    } catch (SQLException | UnsupportedOperationException ignored) {
      // Not every wrapper supports it; the probe still catches a dead socket.
    }
    try (PreparedStatement ps = c.prepareStatement(SET_NAME)) {
      ps.setString(1, APPLICATION_NAME);
      ps.execute();
    }
    try (PreparedStatement ps = c.prepareStatement(LISTEN)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray(String[]::new)));
      ps.setString(2, probeChannel);
      ps.execute();
    }
  }

  private void receive(Connection c) throws SQLException {
    PGConnection pg = c.unwrap(PGConnection.class);
    long probeSeq = 0;
    long probeSentAt = -1;
    long nextProbeAt = System.nanoTime();
    while (!stopping) {
      long now = System.nanoTime();
      if (probeSentAt < 0 && now - nextProbeAt >= 0) {
        probe(c, ++probeSeq);
        probeSentAt = now;
      }
      PGNotification[] batch = pg.getNotifications(RECEIVE_TIMEOUT_MS);
      if (batch != null && batch.length > 0 && route(batch, Long.toString(probeSeq))) {
        probeSentAt = -1;
        nextProbeAt = System.nanoTime() + config.probeInterval().toNanos();
        lastError = null;
        setState(ListenerState.DELIVERING);
      }
      if (probeSentAt >= 0 && System.nanoTime() - probeSentAt > config.probeTimeout().toNanos()) {
        lastError =
            "self-probe not received within " + config.probeTimeout().toMillis() + " ms";
        setState(ListenerState.DEGRADED);
        probeSentAt = -1;
        long retry = Math.min(config.probeInterval().toNanos(), DEGRADED_PROBE_INTERVAL.toNanos());
        nextProbeAt = System.nanoTime() + retry;
      }
    }
  }

  private void probe(Connection c, long seq) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PROBE)) {
      ps.setString(1, probeChannel);
      ps.setString(2, Long.toString(seq));
      ps.execute();
    }
  }

  /** Routes one batch as one wake; returns whether it held the awaited probe. */
  private boolean route(PGNotification[] batch, String awaitedProbe) {
    boolean probeSeen = false;
    var now = new HashSet<String>();
    var later = new HashMap<String, Instant>();
    for (PGNotification n : batch) {
      String channel = n.getName();
      if (channel.equals(probeChannel)) {
        probeSeen |= awaitedProbe.equals(n.getParameter());
        continue;
      }
      if (!channel.startsWith("pgbus_")) {
        continue;
      }
      notifications.incrementAndGet();
      String queue = channel.substring("pgbus_".length());
      String payload = n.getParameter();
      if (payload == null || payload.isEmpty()) {
        now.add(queue);
      } else {
        Instant due = parseDue(payload);
        if (due == null) {
          now.add(queue);
        } else {
          later.merge(queue, due, (a, b) -> a.isBefore(b) ? a : b);
        }
      }
    }
    if (!now.isEmpty() || !later.isEmpty()) {
      wakes.accept(new Wake(now, later, false));
    }
    return probeSeen;
  }

  private static Instant parseDue(String payload) {
    try {
      return Instant.ofEpochMilli(Long.parseLong(payload));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private void setState(ListenerState next) {
    ListenerState previous = state;
    if (previous == next || previous == ListenerState.STOPPED) {
      return;
    }
    state = next;
    LOG.log(
        next == ListenerState.DELIVERING || next == ListenerState.STOPPED
            ? System.Logger.Level.INFO
            : System.Logger.Level.WARNING,
        "pgbus listener {0} -> {1}{2}",
        previous,
        next,
        lastError == null ? "" : " (" + lastError + ")");
    states.accept(next);
  }

  /** Sleeps in short slices so a stop is noticed; false when stopping or interrupted. */
  private boolean pause(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    try {
      while (!stopping) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return true;
        }
        TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  static long jitter(long millis) {
    return Math.max(1, Math.round(millis * (0.5 + ThreadLocalRandom.current().nextDouble())));
  }
}

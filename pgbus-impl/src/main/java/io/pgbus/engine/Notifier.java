package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
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
 *   <li>Only the notifier's own thread touches its connection, including the close. Closing it from
 *       another thread during undeploy crashed a peer; {@link #stop} only asks.
 *   <li>{@code getNotifications} is always called with a finite timeout: with 0 it never returns
 *       when the connection dies. The timeout also bounds how long a stop waits. Waiting costs no
 *       statement: an idle, healthy listener issues one probe per {@code probeInterval} and nothing
 *       else.
 *   <li>A dead connection is noticed three ways: a server that ends the session (a terminated
 *       backend, a restart) sends a FATAL message that {@code getNotifications} raises at once; a
 *       broken socket fails the next read; a silent one (a partition, a dead host) fails the next
 *       probe, whose statement may wait at most {@code probeTimeout} (at least 1 s) for its answer.
 *   <li>The connection stays in auto-commit: pgjdbc delivers nothing while it is in a transaction.
 *   <li>A connected listener can still be deaf (a transaction-mode pooler accepts LISTEN and never
 *       delivers). A self-probe, a NOTIFY to a private channel, proves delivery at start and then
 *       every {@code probeInterval}; a probe that misses {@code probeTimeout} means DEGRADED.
 *   <li>LISTEN never replays. After every (re)connect, once LISTEN is in place, everyone gets a
 *       synthetic wake so the database is re-read.
 * </ul>
 */
final class Notifier extends Loop {

  private static final System.Logger LOG = System.getLogger(Notifier.class.getName());

  /** The getNotifications timeout: bounds stop latency and dead-socket detection. */
  static final int RECEIVE_TIMEOUT_MS = 250;

  /** While degraded, probe this often so recovery is noticed quickly. */
  private static final Duration DEGRADED_PROBE_INTERVAL = Duration.ofSeconds(5);

  /** The shortest network timeout; see {@link #networkTimeoutMs}. */
  private static final int MIN_NETWORK_TIMEOUT_MS = 1_000;

  // Qualified with pg_catalog: the listener connection keeps the application's search_path (see
  // JobStore), and none of these three has an exact match there (varchar binds, anyarray).
  // The name is a literal, so that it is mapped with the text onto the instance's schema.
  private static final String SET_NAME =
      "SELECT pg_catalog.set_config('application_name', '%s', false)"
          .formatted(Channels.LISTENER_APPLICATION_NAME);
  private static final String LISTEN =
      """
      SELECT pgbus.listen(pg_catalog.array_cat(
        ARRAY(SELECT pgbus.channel(q) FROM pg_catalog.unnest(?::text[]) AS q), ?::text[]))
      """;
  private static final String PROBE = "SELECT pg_catalog.pg_notify(?, ?)";

  private final ListenerConnections connections;
  private final List<String> queues;
  private final Consumer<Wake> wakes;
  private final Consumer<ListenerState> states;
  private final HeardCancels cancels;
  private volatile Runnable resigned = () -> {};
  private volatile SentWakes echoes; // null: every queue notification wakes
  private final ListenerConfig config;
  private final SchemaName schema;
  private final String probeChannel;
  private final AtomicLong attempts = new AtomicLong();
  private final AtomicLong connects = new AtomicLong();
  private final AtomicLong notifications = new AtomicLong();
  private final AtomicLong scheduleChanges = new AtomicLong();
  private volatile Runnable schedulesChanged = () -> {};
  private final AtomicLong queueChanges = new AtomicLong();
  private volatile Runnable queuesChanged = () -> {};

  private volatile ListenerState state = ListenerState.STARTING;
  // The backend pid of the LISTEN connection now (0 before the first connect), for pgbus.node.
  private volatile int backendPid;
  private volatile String lastError;
  private boolean networkTimeoutWarned; // only the notifier's thread
  private volatile boolean probesOnTicks;

  // The self-probe, sent by this thread or carried by a ticker's tick (probeToSend): guarded by
  // probeLock. probeAwaited is the payload of the probe that is out (null: none), sent at
  // probeSentAt; lastProbeSeen is when the last one arrived (System.nanoTime()).
  private final Object probeLock = new Object();
  private long probeSeq;
  private String probeAwaited;
  private long probeSentAt;
  private long lastProbeSeen = System.nanoTime();

  /** A notifier that wakes capsules and ignores cancel requests. */
  Notifier(
      ListenerConnections connections,
      List<String> queues,
      Consumer<Wake> wakes,
      Consumer<ListenerState> states,
      ListenerConfig config) {
    this(connections, queues, wakes, states, r -> {}, config);
  }

  /**
   * @param cancels hears the well-formed requests of the {@value Channels#CANCEL} channel, on the
   *     notifier's thread: each distinct one once, together, at most every {@link
   *     HeardCancels#GAP}; it must check them against the database before acting on them
   */
  Notifier(
      ListenerConnections connections,
      List<String> queues,
      Consumer<Wake> wakes,
      Consumer<ListenerState> states,
      Consumer<List<CancelRequest>> cancels,
      ListenerConfig config) {
    this(connections, queues, wakes, states, cancels, config, SchemaName.DEFAULT);
  }

  /**
   * @param schema names the channels: the connections must map their SQL onto it too ({@link
   *     SchemaName#wrap(ListenerConnections)})
   */
  Notifier(
      ListenerConnections connections,
      List<String> queues,
      Consumer<Wake> wakes,
      Consumer<ListenerState> states,
      Consumer<List<CancelRequest>> cancels,
      ListenerConfig config,
      SchemaName schema) {
    this.schema = Objects.requireNonNull(schema, "schema");
    this.cancels = new HeardCancels(Objects.requireNonNull(cancels, "cancels"));
    this.connections = Objects.requireNonNull(connections, "connections");
    this.queues = List.copyOf(queues);
    this.wakes = Objects.requireNonNull(wakes, "wakes");
    this.states = Objects.requireNonNull(states, "states");
    this.config = Objects.requireNonNull(config, "config");
    this.probeChannel =
        Channels.PROBE_PREFIX
            + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
  }

  /**
   * Hears each {@value Channels#LEADER} notification (a leader resigned), on the notifier's thread;
   * it must be cheap, must not throw, and must rate-limit what it does. Call before {@link #start}.
   */
  void onEchoesOf(SentWakes sent) {
    echoes = Objects.requireNonNull(sent);
  }

  void onLeaderResigned(Runnable r) {
    resigned = Objects.requireNonNull(r);
  }

  ListenerState state() {
    return state;
  }

  /** How many times a connection was tried, failed attempts included. */
  long attempts() {
    return attempts.get();
  }

  /** How many times a connection was established (1 after a clean start). */
  long connects() {
    return connects.get();
  }

  /** Notifications received, probes excluded. */
  long notifications() {
    return notifications.get();
  }

  /** Distinct well-formed cancel requests heard and handed on (whatever became of them). */
  long cancelRequests() {
    return cancels.handedOn();
  }

  /** Notifications of {@value Channels#SCHEDULE} heard (each batch handed on once). */
  long scheduleChanges() {
    return scheduleChanges.get();
  }

  /**
   * Who hears that a schedule changed ({@value Channels#SCHEDULE}), on the notifier's thread, once
   * per batch of notifications; set before {@code start}. The payload is not passed on.
   */
  void onSchedulesChanged(Runnable r) {
    this.schedulesChanged = Objects.requireNonNull(r);
  }

  /** Notifications of {@value Channels#QUEUES} heard (each batch handed on once). */
  long queueChanges() {
    return queueChanges.get();
  }

  /**
   * Who hears that a queue's limits or pause changed ({@value Channels#QUEUES}), on the notifier's
   * thread, once per batch of notifications; it must be cheap and must rate-limit what it does. Set
   * before {@code start}. The payload is not passed on.
   */
  void onQueuesChanged(Runnable r) {
    this.queuesChanged = Objects.requireNonNull(r);
  }

  /** The last connection or probe problem, for health output; null when none. */
  String lastError() {
    return lastError;
  }

  /** This listener now, for {@link EngineStatus}. */
  EngineStatus.Listener status() {
    return new EngineStatus.Listener(
        state, attempts(), connects(), notifications(), cancelRequests(), lastError, backendPid());
  }

  /**
   * The loop; a stop ends it within {@link #RECEIVE_TIMEOUT_MS} while connected (only the loop's
   * thread may touch the connection), at once otherwise. The loop closes the connection.
   */
  @Override
  protected void loop() throws InterruptedException {
    var errors =
        new ErrorBackoff("pgbus listener", config.reconnectMin(), config.reconnectMax(), () -> {});
    int failures = 0;
    long failingSince = 0;
    try {
      while (!stopping()) {
        attempts.incrementAndGet();
        Exception failure = null;
        LinkageError missing = null;
        Connection c = null;
        try {
          c = connections.open();
          listen(c);
          connects.incrementAndGet();
          if (failures > 0) {
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failingSince);
            if (connects.get() == 1) {
              LOG.log(
                  System.Logger.Level.INFO,
                  "pgbus listener connected after {0} failed attempt(s) in {1} ms",
                  failures,
                  ms);
            } else {
              // The first failure was the loss of the connection itself.
              LOG.log(
                  System.Logger.Level.INFO,
                  "pgbus listener reconnected {0} ms after losing its connection ({1} failed"
                      + " attempt(s) in between); re-reading every queue",
                  ms,
                  failures - 1);
            }
          }
          failures = 0;
          errors.succeeded();
          // LISTEN is in place: anything committed from now on is notified, and this wake makes
          // every capsule re-read what was committed before (or while we were away).
          wakes.accept(Wake.all());
          receive(c);
        } catch (SQLException | RuntimeException e) {
          failure = e;
        } catch (LinkageError e) {
          missing = e;
        } finally {
          release(c, failure);
        }
        if (missing != null) {
          // A class is missing (NoClassDefFoundError: org/postgresql/PGConnection): no reconnect
          // can bring it back, so say so once, loudly, and end the loop in a state that tells.
          missingClass(missing);
          return;
        }
        if (failure == null || stopping()) {
          continue;
        }
        if (failures++ == 0) {
          failingSince = System.nanoTime();
        }
        lastError = failure.getMessage();
        // Not a direct session: connected, but LISTEN would not hear (or would hear by chance).
        setState(
            failure instanceof NotDirect ? ListenerState.DEGRADED : ListenerState.RECONNECTING);
        // Jitter spreads the reconnects of many JVMs after a restart; the cap keeps its promise.
        // A failure that is not the database's (a bug, a wake that could not be delivered) is
        // logged at ERROR; either way the listener reconnects: no failure ends its loop.
        if (!backOff(errors, failure)) {
          break;
        }
      }
    } finally {
      if (state != ListenerState.FAILED) {
        setState(ListenerState.STOPPED);
      }
    }
  }

  /** Text of the ERROR a missing class causes: the cause and where the fix goes. */
  static String missingClassMessage(LinkageError e) {
    return "pgbus listener FAILED: the class "
        + e.getMessage()
        + " is missing ("
        + e.getClass().getSimpleName()
        + "). The application does not see the PostgreSQL driver"
        + " its datasources use, so LISTEN cannot run and capsules poll instead (every job up to"
        + " pgbus.poll-interval late). Fix: give the application the driver. On WildFly, put"
        + " jboss-deployment-structure.xml in the EAR's META-INF (one in a WAR inside an EAR is"
        + " ignored: WFLYSRV0001), with <module name=\"org.postgresql\" services=\"import\"/> for"
        + " the deployment and for the <sub-deployment> of the WAR that carries pgbus-impl; on"
        + " Liberty, reference the driver's library from the application (commonLibraryRef).";
  }

  private void missingClass(LinkageError e) {
    lastError = "driver missing: " + e.getMessage();
    LOG.log(System.Logger.Level.ERROR, missingClassMessage(e), e);
    setState(ListenerState.FAILED);
  }

  /**
   * Closes the listener connection, first clearing its LISTENs unless it is known to be broken: a
   * container's pool may keep the backend open for the next borrower (WildFly's cannot be switched
   * off), and a backend that still listens queues up notifications nobody reads, and hands them to
   * whoever borrows it next.
   */
  private void release(Connection c, Exception failure) {
    if (c == null) {
      return;
    }
    if (failure == null || !ErrorBackoff.connectionError(failure)) {
      try (Statement st = c.createStatement()) {
        st.execute("UNLISTEN *");
      } catch (SQLException | RuntimeException e) {
        LOG.log(
            System.Logger.Level.DEBUG, "pgbus listener: UNLISTEN * failed: {0}", e.getMessage());
      }
    }
    try {
      c.close();
    } catch (SQLException | RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "pgbus listener: close failed: {0}", e.getMessage());
    }
  }

  private void listen(Connection c) throws SQLException {
    c.setAutoCommit(true);
    try {
      c.setNetworkTimeout(Runnable::run, networkTimeoutMs(config));
    } catch (SQLException | UnsupportedOperationException e) {
      if (!networkTimeoutWarned) {
        networkTimeoutWarned = true;
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus listener: its connection does not take a network timeout ({0}); a silently"
                + " dead connection can then block the listener until the driver's socketTimeout"
                + " (set it on the listener datasource)",
            e.getMessage());
      }
    }
    // A self-probe sent and heard on the same pooled server connection came back through a
    // transaction-mode pooler (issue #33: "delivering" for 62 s). So prove a direct session first:
    // the backend the connection announced runs both statements. Only then LISTEN, and only then
    // the application name, which would otherwise stick to the pooler's server connections.
    PoolerGuard.Session session = PoolerGuard.inspect(c);
    if (!session.direct()) {
      throw new NotDirect(
          "the listener's connection is not a direct session ("
              + session.describe()
              + "): a transaction-mode pooler? Set pgbus.listener.url to the database itself");
    }
    try (PreparedStatement ps = c.prepareStatement(SET_NAME)) {
      ps.execute();
    }
    try (PreparedStatement ps = c.prepareStatement(LISTEN)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray(String[]::new)));
      ps.setArray(
          2,
          c.createArrayOf(
              "text",
              new String[] {
                probeChannel,
                schema.channel(Channels.CANCEL),
                schema.channel(Channels.SCHEDULE),
                schema.channel(Channels.QUEUES),
                schema.channel(Channels.LEADER)
              }));
      ps.execute();
    }
  }

  private void receive(Connection c) throws SQLException {
    PGConnection pg = c.unwrap(PGConnection.class);
    backendPid = pg.getBackendPID(); // known from the connection's start: no statement
    long nextOwnProbeAt = System.nanoTime();
    synchronized (probeLock) {
      probeAwaited = null;
    }
    while (!stopping()) {
      long now = System.nanoTime();
      String own = null;
      long deadline;
      synchronized (probeLock) {
        if (probeAwaited == null && now - nextOwnProbeAt >= 0) {
          own = Long.toString(++probeSeq);
          probeAwaited = own;
          probeSentAt = now;
        }
        // Wake up for the next deadline (a probe to send, or one overdue), at most every 250 ms.
        deadline =
            probeAwaited == null ? nextOwnProbeAt : probeSentAt + config.probeTimeout().toNanos();
      }
      if (own != null) {
        probe(c, own);
      }
      long untilDeadlineMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) + 1;
      long cancelsDueMs = cancels.dueInMs(System.nanoTime()); // -1: none waits
      if (cancelsDueMs >= 0) {
        untilDeadlineMs = Math.min(untilDeadlineMs, cancelsDueMs);
      }
      int waitMs = (int) Math.max(1, Math.min(RECEIVE_TIMEOUT_MS, untilDeadlineMs));
      PGNotification[] batch = pg.getNotifications(waitMs);
      String awaited;
      synchronized (probeLock) {
        awaited = probeAwaited;
      }
      if (batch != null && batch.length > 0 && route(batch, awaited) && awaited != null) {
        long seen = System.nanoTime();
        synchronized (probeLock) {
          if (awaited.equals(probeAwaited)) {
            probeAwaited = null;
          }
          lastProbeSeen = seen;
        }
        nextOwnProbeAt = seen + ownProbeInterval().toNanos();
        lastError = null;
        setState(ListenerState.DELIVERING);
      }
      cancels.handOnIfDue(System.nanoTime());
      boolean lost;
      synchronized (probeLock) {
        lost =
            probeAwaited != null
                && System.nanoTime() - probeSentAt > config.probeTimeout().toNanos();
        if (lost) {
          probeAwaited = null;
        }
      }
      if (lost) {
        lastError = "self-probe not received within " + config.probeTimeout().toMillis() + " ms";
        setState(ListenerState.DEGRADED);
        long retry = Math.min(config.probeInterval().toNanos(), DEGRADED_PROBE_INTERVAL.toNanos());
        nextOwnProbeAt = System.nanoTime() + retry;
      }
    }
  }

  /**
   * When the listener sends a probe of its own after the last one arrived. While probes ride on the
   * ticker's ticks ({@link #probesOnTicks}), a tick normally carries one before this: the own probe
   * is then only the fallback for a ticker that stopped ticking, one probe timeout late.
   */
  private Duration ownProbeInterval() {
    return probesOnTicks
        ? config.probeInterval().plus(config.probeTimeout())
        : config.probeInterval();
  }

  /**
   * Lets the ticker's tick carry this listener's self-probe ({@link #probeToSend}), so an idle JVM
   * sends no probe statement of its own. Call before {@link #start}.
   */
  void probesOnTicks() {
    probesOnTicks = true;
  }

  /** The private channel of this listener's self-probe. */
  String probeChannel() {
    return probeChannel;
  }

  /**
   * Called by the ticker right before a tick: the payload its tick should NOTIFY on {@link
   * #probeChannel}, or null when no probe is wanted. One is wanted while the listener delivers, no
   * probe is out, and the last one arrived half a probe interval ago or more (so a tick at the poll
   * ceiling always carries one). The probe counts as sent now; the ticker reports a failed tick
   * with {@link #probeNotSent}.
   */
  String probeToSend() {
    if (!probesOnTicks || state != ListenerState.DELIVERING) {
      return null;
    }
    long now = System.nanoTime();
    synchronized (probeLock) {
      if (probeAwaited != null || now - lastProbeSeen < config.probeInterval().toNanos() / 2) {
        return null;
      }
      probeAwaited = Long.toString(++probeSeq);
      probeSentAt = now;
      return probeAwaited;
    }
  }

  /** The tick that was to carry {@code payload} failed: no probe is out. */
  void probeNotSent(String payload) {
    synchronized (probeLock) {
      if (payload.equals(probeAwaited)) {
        probeAwaited = null;
      }
    }
  }

  /**
   * How long one statement on the listener connection may wait for its answer: the probe timeout,
   * so a probe on a silently dead socket fails (and the listener reconnects) about when it would
   * have been declared lost anyway, instead of leaving the state DELIVERING meanwhile.
   */
  static int networkTimeoutMs(ListenerConfig config) {
    long ms = Math.min(Integer.MAX_VALUE, config.probeTimeout().toMillis());
    return (int) Math.max(MIN_NETWORK_TIMEOUT_MS, ms);
  }

  private void probe(Connection c, String payload) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PROBE)) {
      ps.setString(1, probeChannel);
      ps.setString(2, payload);
      ps.execute();
    }
  }

  /** Routes one batch as one wake; returns whether it held the awaited probe (null: none). */
  private boolean route(PGNotification[] batch, String awaitedProbe) {
    boolean probeSeen = false;
    boolean scheduleChanged = false; // handed on once per batch, however many it holds
    boolean queueChanged = false; // the same
    var now = new HashSet<String>();
    var later = new HashMap<String, Instant>();
    Instant received = Instant.now();
    for (PGNotification n : batch) {
      // This schema's channels, under the names of the default's (the identity there).
      String channel = schema.unchannel(n.getName());
      if (channel.equals(probeChannel)) {
        probeSeen |= awaitedProbe != null && awaitedProbe.equals(n.getParameter());
        continue;
      }
      if (channel.equals(Channels.CANCEL)) {
        cancelHeard(n.getParameter());
        continue;
      }
      if (channel.equals(Channels.SCHEDULE)) {
        // The payload is ignored: anyone may send one, and all it may ask for is a (rate-limited)
        // read of the schedules by the leader.
        scheduleChanges.incrementAndGet();
        scheduleChanged = true;
        continue;
      }
      if (channel.equals(Channels.QUEUES)) {
        // The payload is ignored, as for schedules: all it may ask for is a rate-limited re-read.
        queueChanges.incrementAndGet();
        queueChanged = true;
        continue;
      }
      if (channel.equals(Channels.LEADER)) {
        resigned.run(); // the payload is ignored: it only brings a rate-limited look forward
        continue;
      }
      if (!channel.startsWith(Channels.QUEUE_PREFIX)) {
        continue;
      }
      notifications.incrementAndGet();
      String queue = channel.substring(Channels.QUEUE_PREFIX.length());
      if (echoes != null && echoes.echo(n.getPID(), queue)) {
        continue; // this JVM's own wake coming back: its capsules were woken in-process
      }
      String payload = n.getParameter();
      if (payload == null || payload.isEmpty()) {
        now.add(queue);
      } else {
        Instant due = parseDue(payload, received);
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
    if (queueChanged) {
      try {
        queuesChanged.run();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "pgbus listener: a queue change wake failed", e);
      }
    }
    if (scheduleChanged) {
      try {
        schedulesChanged.run();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "pgbus listener: a schedule change wake failed", e);
      }
    }
    return probeSeen;
  }

  /** Keeps a well-formed cancel request for {@link HeardCancels}; a malformed one is dropped. */
  private void cancelHeard(String payload) {
    CancelRequest request = CancelRequest.parse(payload);
    if (request == null) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus listener: dropped a malformed {0} payload of {1} characters",
          Channels.CANCEL,
          payload == null ? 0 : payload.length());
      return;
    }
    cancels.heard(request);
  }

  /**
   * The due time a notification announces, or null for "look now". A payload is only a hint, and an
   * untrusted one: any database login may NOTIFY any channel, no privilege needed. So only a time
   * within the schedule horizon ({@link EnqueueOptions#MAX_SCHEDULE_AHEAD}, which no real job can
   * exceed) from {@code now} becomes an alarm. Anything else (not a number, in the past, absurdly
   * far ahead like {@code 9223372036854775807}) is read as "look now", the same as an empty
   * payload: it costs one claim, which reads the truth from the table, and never sets an alarm no
   * real job asked for.
   */
  static Instant parseDue(String payload, Instant now) {
    long millis;
    try {
      millis = Long.parseLong(payload);
    } catch (NumberFormatException e) {
      return null;
    }
    long nowMillis = now.toEpochMilli();
    long horizon = EnqueueOptions.MAX_SCHEDULE_AHEAD.toMillis();
    if (millis <= nowMillis || millis - nowMillis > horizon) {
      return null;
    }
    return Instant.ofEpochMilli(millis);
  }

  /** The listener's connection goes through a pooler: it stays DEGRADED and tries again. */
  static final class NotDirect extends SQLException {
    NotDirect(String message) {
      super(message);
    }
  }

  /** The backend pid of the LISTEN connection, or null before it first connected. */
  Integer backendPid() {
    int pid = backendPid;
    return pid == 0 ? null : pid;
  }

  private void setState(ListenerState next) {
    ListenerState previous = state;
    if (previous == next
        || previous == ListenerState.STOPPED
        || (previous == ListenerState.FAILED && next != ListenerState.STOPPED)) {
      return;
    }
    state = next;
    LOG.log(
        next == ListenerState.FAILED
            ? System.Logger.Level.ERROR
            : next == ListenerState.DELIVERING || next == ListenerState.STOPPED
                ? System.Logger.Level.INFO
                : System.Logger.Level.WARNING,
        "pgbus listener {0} -> {1}{2}",
        previous,
        next,
        lastError == null ? "" : " (" + lastError + ")");
    try {
      states.accept(next);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "pgbus listener: reporting state " + next + " failed", e);
    }
  }
}

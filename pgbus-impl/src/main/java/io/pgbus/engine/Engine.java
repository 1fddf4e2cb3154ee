package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The engine: one notifier, the capsules, and the maintainer, wired to the ports. It runs the same
 * in Java SE and inside a container; the container adapter supplies the executor, the transaction
 * runner and the handler function. The job operations (enqueue, pause, cancel, ...) are {@link
 * Jobs}, which need no running engine; {@link #jobs()} is this engine's, with its tracing.
 *
 * <pre>{@code
 * Engine engine = Engine.builder(config, dataSource)
 *     .listenerConnections(() -> DriverManager.getConnection(url))
 *     .jobs((job, tx) -> { ...; return Outcome.complete(); })
 *     .build();
 * engine.start();
 * }</pre>
 */
public final class Engine {

  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  private final EngineConfig config;
  private final DataSource dataSource;
  private final JobStore store = new JobStore();
  private final Jobs jobs;
  private final JobAdminStore adminStore = new JobAdminStore();
  private final ExecutorService ownedExecutor;
  private final java.util.concurrent.Executor executor;
  // Starts the long-running loops: on threads of their own when a thread factory was given, so
  // they never hold a thread of the executor that runs the jobs.
  private final java.util.concurrent.Executor loops;
  private final boolean loopsOnExecutor;
  private final List<Capsule> capsules = new ArrayList<>();
  private final Map<String, List<Capsule>> capsulesByQueue = new HashMap<>();
  private final Notifier notifier;
  private final Ticker ticker;
  private final Elector elector;
  private final Maintainer maintainer;
  private final JobRunner single;
  private final ScheduleEnqueuer cron;
  private final ScheduleBook schedules;
  private final boolean maintenance;
  private final NodeReporter node;
  private volatile boolean started;
  private final QueueLimitStore limits = new QueueLimitStore();
  // The capsules' queues that pgbus.queue_limit limits, as read at start (after this engine wrote
  // its own) and again on the tick after a change was announced (limitsStale): a finished job of
  // one of them makes its capsule claim again, and may wake the fleet's (see limitFreed).
  private volatile Set<String> limited = Set.of();
  private final java.util.concurrent.atomic.AtomicBoolean limitsStale =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final java.util.concurrent.atomic.AtomicLong limitReads =
      new java.util.concurrent.atomic.AtomicLong();

  private Engine(Builder b) {
    requireUnbatched(b.config, b.handlerTransactions);
    this.config = b.config;
    this.dataSource = b.dataSource;
    if (b.executor == null) {
      this.ownedExecutor = Executors.newCachedThreadPool(namedThreads());
      this.executor = ownedExecutor;
    } else {
      this.ownedExecutor = null;
      this.executor = b.executor;
    }
    this.loopsOnExecutor = b.loopThreads == null;
    this.loops = loopsOnExecutor ? executor : task -> startThread(b.loopThreads, task);
    Transactions tx = b.transactions != null ? b.transactions : new JdbcTransactions(dataSource);
    this.jobs =
        new Jobs(config.workerId(), config.maxPayloadBytes(), b.tracing, config::maxAttempts);
    JobFunction handlers = b.tracing.around(b.jobs != null ? b.jobs : Engine::noHandler);
    Consumer<Wake> wakes = b.wakes != null ? b.wakes : this::wake;
    this.notifier =
        b.listenerConnections == null || config.capsules().isEmpty()
            ? null
            : new Notifier(
                b.listenerConnections,
                config.queues(),
                wakes,
                this::listenerChanged,
                this::cancelsHeard,
                config.listener());
    ExecutionConfig execution = config.execution();
    this.ticker =
        config.capsules().isEmpty()
            ? null
            : new Ticker(
                new Ticker.Heartbeat(
                    config.workerId(),
                    execution.heartbeatInterval(),
                    execution.lease(),
                    this::jobsAlive,
                    notifier,
                    b.maintenance ? Elector.MAINTENANCE : null,
                    this::ticked),
                dataSource,
                config.queues(),
                this::listenerState,
                config.ticker(),
                this::route,
                this::connectionLost);
    this.single =
        new JobRunner(
            store,
            dataSource,
            tx,
            handlers,
            b.handlerTransactions::contains,
            config::retry,
            b.events,
            loops,
            config.retention().deletesCompleted(),
            b.errorDetail);
    BatchRunner runner =
        new BatchRunner(single, store, dataSource, tx, b.events, execution.lease());
    int threadsNeeded = executorThreadsNeeded();
    for (CapsuleConfig cc : config.capsules()) {
      Capsule capsule =
          new Capsule(
              cc,
              config.workerId(),
              execution,
              config::jobTimeout,
              config.ticker().interval().multipliedBy(10),
              store,
              dataSource,
              executor,
              loopsOnExecutor,
              threadsNeeded,
              runner,
              this::connectionLost);
      capsule.onLimitFreed(q -> limited.contains(q), this::limitFreed);
      capsules.add(capsule);
      for (String q : cc.queues()) {
        capsulesByQueue.computeIfAbsent(q, k -> new ArrayList<>()).add(capsule);
      }
    }
    this.maintenance = b.maintenance;
    this.node =
        config.capsules().isEmpty()
            ? null
            : new NodeReporter(
                dataSource,
                config.workerId(),
                config.capsules(),
                this::listenerState,
                () -> notifier == null ? null : notifier.backendPid(),
                execution.heartbeatTtl());
    // Always there: schedules made through the API need the leader's tick without any config.
    this.cron = new ScheduleEnqueuer(config.crons(), store, tx, config.ticker().ceiling());
    this.schedules = new ScheduleBook(jobs, config.maxPayloadBytes());
    // The maintainer asks the elector through this engine, and the elector tells the maintainer of
    // a change: neither needs the other at construction.
    this.maintainer =
        new Maintainer(
            dataSource,
            store,
            config.maintainer(),
            config.retention(),
            this::leader,
            cron,
            execution.heartbeatTtl().dividedBy(3));
    if (notifier != null) {
      // A schedule change's NOTIFY brings the leader's next schedule tick forward (rate-limited).
      notifier.onSchedulesChanged(maintainer::schedulesChanged);
      // A queue's limits or pause changed: the next tick (soon, rate-limited) re-reads the limits
      // and wakes the capsules whose queues have jobs due.
      notifier.onQueuesChanged(this::queuesChanged);
    }
    if (ticker != null) {
      ticker.beforeEachTick(this::rereadLimits);
    }
    this.elector =
        new Elector(
            dataSource,
            config.workerId(),
            config.elector(),
            maintainer::leadershipChanged,
            this::connectionLost);
    if (ticker != null) {
      // The tick carries the probe, the leader check and the heartbeat (see Ticker).
      capsules.forEach(c -> c.onClaimed(ticker::nudge));
      elector.followTicks(
          longer(config.ticker().ceiling(), config.elector().ttl()).multipliedBy(2));
      if (notifier != null) {
        notifier.onLeaderResigned(elector::resignHeard);
      }
      // Only when ticks come at least as often as probes are due: a probe interval set below the
      // ceiling (faster detection of a deaf listener) keeps the listener's own probes.
      if (notifier != null
          && config.ticker().ceiling().compareTo(config.listener().probeInterval()) <= 0) {
        notifier.probesOnTicks();
      }
    }
  }

  private static Duration longer(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** For tests: {@link #jobsAlive}. */
  List<ClaimedJob> jobsAliveForTest() {
    return jobsAlive();
  }

  /**
   * What this JVM's heartbeat keeps alive: the jobs its capsules hold, claimed and waiting or
   * running within their timeout.
   */
  private List<ClaimedJob> jobsAlive() {
    var alive = new ArrayList<ClaimedJob>();
    Watchdog watchdog = single.watchdog();
    for (Capsule c : capsules) {
      for (ClaimedJob job : c.held()) {
        if (watchdog.vouchesFor(job)) {
          alive.add(job);
        }
      }
    }
    return alive;
  }

  /** A tick's result: the leader lease for the elector, and a row to write again if it is gone. */
  private void ticked(NodeStore.Tick tick) {
    if (maintenance && started) { // a stopping engine's ticker beats on, and elects nothing
      elector.tickSaw(tick.leader());
    }
    if (Boolean.FALSE.equals(tick.nodeFound()) && node != null && started) {
      node.changed(loops);
    }
  }

  /**
   * A job whose handler opens its own transactions shares none with other jobs: an adaptive capsule
   * runs such jobs alone, and a capsule with a fixed jobs-per-transaction above 1 must not read
   * such a queue.
   */
  private static void requireUnbatched(EngineConfig config, Set<String> handlerTransactions) {
    for (CapsuleConfig cc : config.capsules()) {
      if (cc.jobsPerTransaction() == 1 || cc.adaptive()) {
        continue;
      }
      for (String q : cc.queues()) {
        if (handlerTransactions.contains(q)) {
          String key = "pgbus.capsule." + cc.name() + ".jobs-per-transaction";
          String message =
              key
                  + " is "
                  + cc.jobsPerTransaction()
                  + ", but the capsule reads queue '"
                  + q
                  + "', whose handler runs in its own transactions (JobTransaction.HANDLER),"
                  + " and such jobs never share a transaction: set it to 1, or read '"
                  + q
                  + "' from a capsule of its own";
          throw new InvalidConfigException(key, message);
        }
      }
    }
  }

  private static void startThread(java.util.concurrent.ThreadFactory factory, Runnable task) {
    Thread t = factory.newThread(task);
    if (t == null) {
      throw new java.util.concurrent.RejectedExecutionException(
          "the loop thread factory made no thread (is the application stopping?)");
    }
    t.start();
  }

  /**
   * The threads the executor needs so that no job waits for one: a thread per slot, plus the
   * engine's loops when they run on the executor too (no {@link Builder#loopThreads}).
   */
  public int executorThreadsNeeded() {
    return Capsule.threadsNeeded(config, loopsOnExecutor);
  }

  public static Builder builder(EngineConfig config, DataSource dataSource) {
    return new Builder(config, dataSource);
  }

  public EngineConfig config() {
    return config;
  }

  /** Starts the notifier, the capsules and (if enabled) the maintainer. Idempotent. */
  public synchronized void start() {
    if (started) {
      return;
    }
    started = true;
    publishPayloadLimit();
    publishQueueLimits();
    syncConfiguredSchedules();
    if (node != null) {
      node.started();
    }
    if (notifier != null) {
      notifier.start(loops);
    }
    for (Capsule c : capsules) {
      c.start(loops);
    }
    if (ticker != null) {
      ticker.start(loops);
    }
    if (maintenance) {
      elector.start(loops);
      maintainer.start(loops);
    }
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus engine {0} started: {1} capsule(s) over queues {2}, {3} cron(s)",
        config.workerId(),
        capsules.size(),
        config.queues(),
        config.crons().size());
  }

  /** How long a stop waits for the handlers it interrupted after the drain to return. */
  static final Duration RELEASED_RETURN = Duration.ofSeconds(5);

  /**
   * Stops claiming, stops the listener and the maintainer, and waits up to the drain timeout for
   * running handlers. Jobs still held after that (running, or claimed and not started) are released
   * back to {@code available} without spending an attempt, and logged; a handler that still runs is
   * then interrupted, can no longer complete its job (the fence), and is given {@link
   * #RELEASED_RETURN} to return. When the database cannot be reached they keep their lease and are
   * rescued later. Returns how many slots were still busy.
   */
  public synchronized int stop() {
    if (!started) {
      return 0;
    }
    started = false;
    single.engineStopping(); // a failure from now on is a release, not a spent attempt
    capsules.forEach(Capsule::stop); // stops claiming at once; running jobs go on
    if (notifier != null && !notifier.stop(Duration.ofSeconds(5))) {
      LOG.log(System.Logger.Level.WARNING, "pgbus listener did not stop within 5 s");
    }
    if (node != null) {
      // The row stays, and the ticker beats on, until the jobs are back: a drain longer than
      // two thirds of the heartbeat TTL must not let the leader rescue jobs that still run here.
      node.stopping();
    }
    maintainer.stop(Duration.ofSeconds(5)); // at once when it never started (no maintenance)
    elector.stop(Duration.ofSeconds(5));
    long deadline = System.nanoTime() + config.execution().drainTimeout().toNanos();
    int left = 0;
    for (Capsule c : capsules) {
      left += c.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    if (left > 0) {
      single.abandonRetries();
      handBack();
      // Released first, then interrupted: whatever an interrupted handler does next is fenced out.
      // Its thread must return, for a container waits for it (WildFly's undeploy waits for every
      // EJB call in flight, the job's transaction included) and a job thread must not outlive
      // its application.
      if (single.interruptReleased() > 0) {
        long after = System.nanoTime() + RELEASED_RETURN.toNanos();
        int stuck = 0;
        for (Capsule c : capsules) {
          stuck += c.awaitIdle(Duration.ofNanos(Math.max(0, after - System.nanoTime())));
        }
        if (stuck > 0) {
          LOG.log(
              System.Logger.Level.WARNING,
              "pgbus engine {0}: {1} handler(s) ignored the interrupt for {2} after their jobs"
                  + " were released; their threads run on, and the container may wait for them",
              config.workerId(),
              stuck,
              Durations.format(RELEASED_RETURN));
        }
      }
    }
    if (ticker != null) {
      ticker.stop();
    }
    if (releaseWhatStillRuns() && node != null) {
      node.stopped();
    }
    if (ownedExecutor != null) {
      ownedExecutor.shutdown();
    }
    return left;
  }

  /**
   * The last step of a stop: releases whatever this worker still has running in the database
   * (typically an attempt whose failure the stopping container would not let it record), and says
   * which. False when the database could not be reached: the node row then stays, goes stale, and
   * the leader rescues those jobs within one heartbeat TTL.
   */
  private boolean releaseWhatStillRuns() {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Map<String, List<Long>> released = store.jobReleaseWorker(c, config.workerId());
      if (!released.isEmpty()) {
        StopLog.log(
            LOG,
            System.Logger.Level.WARNING,
            "pgbus engine {0} found jobs of its own still running at the end of its stop; released"
                + " them back to available without spending an attempt: {1}",
            config.workerId(),
            released);
      }
      return true;
    } catch (SQLException e) {
      StopLog.log(
          LOG,
          System.Logger.Level.WARNING,
          "pgbus engine {0} could not check for jobs of its own left running at the end of its"
              + " stop ({1}); its pgbus.node row stays, so the leader rescues any within one"
              + " heartbeat TTL ({2})",
          config.workerId(),
          e.getMessage(),
          ExecutionConfig.HEARTBEAT_TTL.key());
      return false;
    }
  }

  /** Releases what the capsules still hold after the drain, and says which jobs went back. */
  private void handBack() {
    var held = new ArrayList<ClaimedJob>();
    capsules.forEach(c -> held.addAll(c.handBack()));
    Duration drain = config.execution().drainTimeout();
    if (held.isEmpty()) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Map<String, List<Long>> released = store.jobReleaseDrained(c, held);
      int n = released.values().stream().mapToInt(List::size).sum();
      StopLog.log(
          LOG,
          System.Logger.Level.WARNING,
          "pgbus engine {0} stopped with {1} job(s) still held after the {2} drain ({3}); released"
              + " {4} back to available without spending an attempt: {5}",
          config.workerId(),
          held.size(),
          Durations.format(drain),
          ExecutionConfig.DRAIN_TIMEOUT.key(),
          n,
          released);
    } catch (SQLException e) {
      StopLog.log(
          LOG,
          System.Logger.Level.WARNING,
          "pgbus engine {0} stopped with {1} job(s) still held after the {2} drain and could not"
              + " release them ({3}); lease rescue will return them: {4}",
          config.workerId(),
          held.size(),
          Durations.format(drain),
          e.getMessage(),
          held.stream().map(ClaimedJob::id).toList());
    }
  }

  /**
   * Routes a wake to the capsules that read one of its queues, and to no other. A wake for everyone
   * (after a listener reconnect) becomes one poll, which then wakes exactly the capsules whose
   * queues have work.
   */
  public void wake(Wake wake) {
    if (wake.everyone()) {
      // LISTEN never replays: a change announced while the listener was away is re-read too.
      limitsStale.set(true);
      if (ticker != null) {
        ticker.tickNow();
      }
      return;
    }
    route(wake);
  }

  private void route(Wake wake) {
    var targets = new java.util.LinkedHashSet<Capsule>();
    for (String q : wake.now()) {
      targets.addAll(capsulesByQueue.getOrDefault(q, List.of()));
    }
    for (String q : wake.later().keySet()) {
      targets.addAll(capsulesByQueue.getOrDefault(q, List.of()));
    }
    targets.forEach(c -> c.wake(wake));
  }

  /** The job operations (enqueue, pause, cancel, ...), with this engine's settings and tracing. */
  public Jobs jobs() {
    return jobs;
  }

  /** The listener's state; DEGRADED-equivalent polling applies when there is no listener. */
  ListenerState listenerState() {
    return notifier == null ? ListenerState.DEGRADED : notifier.state();
  }

  /** The notifier, or null when this engine has no capsules or no listener connections. */
  Notifier notifier() {
    return notifier;
  }

  List<Capsule> capsules() {
    return List.copyOf(capsules);
  }

  /** Every long-running loop of this engine, started or not (for the shared stop test). */
  List<Loop> allLoops() {
    var all = new ArrayList<Loop>(capsules);
    if (notifier != null) {
      all.add(notifier);
    }
    if (ticker != null) {
      all.add(ticker);
    }
    all.add(elector);
    all.add(maintainer);
    return all;
  }

  boolean running() {
    return started;
  }

  /** The operator's SQL: search, bulk actions, queue counts (JobAdmin). */
  public JobAdminStore adminStore() {
    return adminStore;
  }

  /** The holder of the maintenance lease now, or null when it is free. */
  public String leaderHolder(Connection c) {
    try {
      LeaderStore.Lease lease = new LeaderStore().leaderLease(c, Elector.MAINTENANCE);
      return lease == null ? null : lease.holder();
    } catch (SQLException e) {
      throw Failures.of(null, "read the maintenance leader", e);
    }
  }

  /**
   * Cancels of running jobs were heard: the runner checks them and stops the handlers that are
   * ours.
   */
  private void cancelsHeard(List<CancelRequest> requests) {
    single.cancelsHeard(requests);
  }

  private void listenerChanged(ListenerState state) {
    if (state == ListenerState.RECONNECTING) {
      connectionLost();
    }
    if (node != null) {
      node.changed(loops);
    }
    if (ticker != null) {
      ticker.nudge();
    }
  }

  /**
   * A loop lost the database, or the listener reconnects: see {@link Maintainer#connectionLost}.
   */
  private void connectionLost() {
    maintainer.connectionLost();
  }

  /** Whether this engine is the elected maintenance leader now. */
  boolean leader() {
    return elector.isLeader();
  }

  /**
   * What this engine is doing now, in one immutable snapshot: the only view of its roles that the
   * runtime, the admin API and the metrics get.
   */
  public EngineStatus status() {
    return new EngineStatus(
        config.workerId(),
        started,
        elector.isLeader(),
        notifier == null ? EngineStatus.Listener.NONE : notifier.status(),
        capsules.stream().map(Capsule::status).toList(),
        ticker == null ? 0 : ticker.ticks(),
        elector.statements(),
        maintainer.rounds(),
        maintainer.rescued(),
        cron.enqueued(),
        maintainer.scheduleWakes(),
        notifier == null ? 0 : notifier.scheduleChanges(),
        notifier == null ? 0 : notifier.queueChanges(),
        limitReads.get());
  }

  /** The schedule operations ({@code pgbus.schedule}); they need no running engine. */
  public ScheduleBook schedules() {
    return schedules;
  }

  /**
   * Creates or updates the configured crons as schedules. A failure (database down, no V15 schema
   * yet) is logged; the leader's schedule task tries again before its first tick.
   */
  private void syncConfiguredSchedules() {
    if (config.crons().isEmpty()) {
      return;
    }
    try {
      cron.syncConfig(null);
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not store the configured crons as schedules yet ({0}); the maintenance"
              + " leader tries again",
          e.toString());
    }
  }

  /**
   * Writes pgbus.max-payload-bytes to pgbus.setting, where the SQL functions read it, and logs a
   * change. A failure (no V5 schema yet, or a role without UPDATE on pgbus.setting) is logged and
   * leaves the SQL limit as it was: the Java API keeps its own limit either way.
   */
  private void publishPayloadLimit() {
    int limit = config.maxPayloadBytes();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      Integer before = new SettingStore().settingMaxPayloadBytes(c, limit, config.workerId());
      if (before != null) {
        LOG.log(
            System.Logger.Level.INFO,
            "pgbus engine {0}: the SQL payload limit (pgbus.setting.max_payload_bytes) is now {1}"
                + " bytes, was {2}, from pgbus.max-payload-bytes; the last JVM to start sets it, so"
                + " keep pgbus.max-payload-bytes equal on all of them",
            config.workerId(),
            limit,
            before);
      }
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus engine {0} could not write pgbus.max-payload-bytes ({1}) to pgbus.setting: {2};"
              + " SQL enqueues and claims keep the limit stored there. Grant the application's"
              + " role UPDATE on pgbus.setting",
          config.workerId(),
          limit,
          e.getMessage());
    }
  }

  /**
   * Writes the configured flow control of every queue the capsules read to pgbus.queue_limit, or
   * removes it when none is configured here (the last engine to start that reads a queue decides,
   * as for pgbus.max-payload-bytes), then reads which of them the database limits.
   */
  private void publishQueueLimits() {
    List<String> queues = config.queues();
    if (queues.isEmpty()) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      for (String q : queues) {
        limits.queueLimitWrite(c, config.queueLimit(q), config.workerId());
      }
      limited = Set.copyOf(limits.queuesLimited(c, queues));
    } catch (SQLException e) {
      // The claim still enforces whatever the table holds; only this engine's own limits and its
      // wake-ups on a freed slot are missing (capsules then claim on the next poll).
      limited = Set.copyOf(queues);
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus engine {0} could not write its queue limits (pgbus.queue.*.global-concurrency,"
              + " key-concurrency) to pgbus.queue_limit: {1}; the claims obey the limits stored"
              + " there. Grant the application's role EXECUTE on pgbus.queue_limit_set",
          config.workerId(),
          e.getMessage());
    }
  }

  /**
   * Someone announced a change of a queue's limits or pause ({@value Channels#QUEUES}, on the
   * notifier's thread). The announcement is untrusted and carries nothing: it only marks the limits
   * stale and asks for a tick, at most one per {@link Ticker#SOON_GAP}, which re-reads them ({@link
   * #rereadLimits}) and wakes the capsules whose queues have jobs due (a resume, a raised limit). A
   * pause needs nothing more: every claim reads the pauses.
   */
  private void queuesChanged() {
    limitsStale.set(true);
    if (ticker != null) {
      ticker.tickSoon();
    }
  }

  /**
   * On the tick's connection (autocommit): which queues are limited, when a change made that stale.
   * A failure leaves them stale for the next tick and does not fail this one.
   */
  private void rereadLimits(Connection c) {
    if (!limitsStale.getAndSet(false)) {
      return;
    }
    try {
      limited = Set.copyOf(limits.queuesLimited(c, config.queues()));
      limitReads.incrementAndGet();
    } catch (SQLException e) {
      limitsStale.set(true);
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus engine {0} could not re-read its limited queues: {1}",
          config.workerId(),
          e.getMessage());
    }
  }

  /**
   * Jobs of limited queues finished here: wake every capsule of the fleet that reads them, since
   * one may be waiting on the limit (the claim that hit it went back to sleep). Autocommit, after
   * the jobs' own transaction; a failure only costs the wait until the next poll.
   */
  private void limitFreed(Set<String> queues) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      limits.queueWake(c, queues);
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus engine {0} could not send the wake-up of limited queues {1}: {2}",
          config.workerId(),
          queues,
          e.getMessage());
    }
  }

  /**
   * The limited queues in one line for health data, for example {@code "partner_api(global 5, per
   * key 1: 5 running, 120 waiting on the limit, 0 on a worker)"}; "" when none.
   */
  public static String describeLimits(List<QueueLimitStatus> limits) {
    var parts = new ArrayList<String>();
    for (QueueLimitStatus l : limits) {
      parts.add(
          l.queue()
              + "(global "
              + (l.globalConcurrency() == null ? "none" : l.globalConcurrency())
              + ", per key "
              + l.keyConcurrency()
              + l.describeFifo()
              + l.describeRate()
              + ": "
              + l.running()
              + " running, "
              + l.waitingOnLimit()
              + " waiting on the limit, "
              + l.waitingOnWorker()
              + " on a worker)");
    }
    return String.join(", ", parts);
  }

  /** Every limited queue of the database, its limits and what waits on them. */
  public List<QueueLimitStatus> queueLimits() {
    try (Connection c = dataSource.getConnection()) {
      return queueLimits(c);
    } catch (SQLException e) {
      throw new io.pgbus.PgbusException(
          "pgbus could not read the queue limits: " + e.getMessage(), e);
    }
  }

  /**
   * The queue limits read on the caller's connection: a caller that already holds one (readiness)
   * must not take a second from the pool, or concurrent callers starve a small pool.
   */
  public List<QueueLimitStatus> queueLimits(Connection c) throws SQLException {
    return limits.queueLimitStatus(c);
  }

  private static io.pgbus.Outcome noHandler(ClaimedJob job, Connection c) {
    throw new IllegalStateException(
        "no handler is registered for queue '" + job.queue() + "' (job " + job.id() + ")");
  }

  private static java.util.concurrent.ThreadFactory namedThreads() {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, "pgbus-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** Wires an engine. Only the config and the datasource are required. */
  public static final class Builder {
    private final EngineConfig config;
    private final DataSource dataSource;
    private java.util.concurrent.Executor executor;
    private java.util.concurrent.ThreadFactory loopThreads;
    private Transactions transactions;
    private ListenerConnections listenerConnections;
    private JobFunction jobs;
    private Set<String> handlerTransactions = Set.of();
    private Consumer<Wake> wakes;
    private JobEvents events = JobEvents.NONE;
    private boolean maintenance = true;
    private ErrorDetail errorDetail = ErrorDetail.STACK;
    private JobTracing tracing = JobTracing.NONE;

    private Builder(EngineConfig config, DataSource dataSource) {
      this.config = Objects.requireNonNull(config, "config");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** Runs loops and jobs; default: a cached pool the engine owns and shuts down on stop. */
    public Builder executor(java.util.concurrent.Executor v) {
      executor = v;
      return this;
    }

    /**
     * Makes the threads of the long-running loops (listener, ticker, capsule claim loops, leader,
     * maintenance, job-timeout watchdog), which then stay off the executor: it runs only jobs. In a
     * container, the ManagedThreadFactory. Default: the loops run on the executor.
     */
    public Builder loopThreads(java.util.concurrent.ThreadFactory v) {
      loopThreads = v;
      return this;
    }

    /** Runs each job in a new transaction; default: {@link JdbcTransactions} on the datasource. */
    public Builder transactions(Transactions v) {
      transactions = v;
      return this;
    }

    /** Opens the LISTEN connection; without it, capsules only poll at the poll interval. */
    public Builder listenerConnections(ListenerConnections v) {
      listenerConnections = v;
      return this;
    }

    /** Runs the jobs. */
    public Builder jobs(JobFunction v) {
      jobs = v;
      return this;
    }

    /**
     * The queues whose handlers run in their own transactions ({@link
     * io.pgbus.JobTransaction#HANDLER}): their {@link JobFunction} is called outside any
     * transaction, and their outcome is committed on its own. Default: none. A capsule that reads
     * one of them must have jobs-per-transaction 1, or {@link #build} throws {@link
     * InvalidConfigException}.
     */
    public Builder handlerTransactions(Set<String> queues) {
      handlerTransactions = Set.copyOf(queues);
      return this;
    }

    /** Where notifier wakes go; default: straight to {@link Engine#wake}. */
    public Builder wakes(Consumer<Wake> v) {
      wakes = v;
      return this;
    }

    public Builder events(JobEvents v) {
      events = Objects.requireNonNull(v);
      return this;
    }

    /** Whether this engine takes part in the maintenance leader election (default true). */
    public Builder maintenance(boolean v) {
      maintenance = v;
      return this;
    }

    /** How much of a handler's exception a failed job records (default: the stack trace). */
    public Builder errorDetail(ErrorDetail v) {
      errorDetail = Objects.requireNonNull(v);
      return this;
    }

    /** Carries the enqueuer's trace to the handler's span (default {@link JobTracing#NONE}). */
    public Builder tracing(JobTracing v) {
      tracing = Objects.requireNonNull(v);
      return this;
    }

    public Engine build() {
      return new Engine(this);
    }
  }
}

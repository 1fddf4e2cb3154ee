package io.pgbus.engine;

import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
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

  /** How long a stop waits for the listener, the maintainer and the elector to end. */
  private static final Duration LOOP_STOP_WAIT = Duration.ofSeconds(5);

  private final EngineConfig config;
  private final SchemaName schema;
  private final DataSource dataSource;
  private final JobStore store = new JobStore();
  private final Jobs jobs;
  private final JobAdminStore adminStore = new JobAdminStore();
  private final ExecutorService ownedExecutor;
  private final Executor executor;
  // Starts the long-running loops: on threads of their own when a thread factory was given, so
  // they never hold a thread of the executor that runs the jobs.
  private final Executor loops;
  private final boolean loopsOnExecutor;
  private final List<Capsule> capsules;
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
  private final FlowControl flow;
  private final StopRelease release;
  private final WakeSender sender;
  private final Transactions transactions;
  private final LocalAfterCommit localAfterCommit;
  private final AtomicLong localWakes = new AtomicLong();
  private volatile boolean started;

  private Engine(Builder b) {
    Grouping.requireUnbatched(b.config, b.handlerTransactions);
    this.config = b.config;
    this.schema = b.schema;
    // The one place the engine's connections are mapped onto its schema (the identity for the
    // default one): every store below writes its SQL against pgbus.
    this.dataSource = schema.wrap(b.dataSource);
    this.maintenance = b.maintenance;
    this.ownedExecutor = b.executor == null ? EngineThreads.owned() : null;
    this.executor = b.executor == null ? ownedExecutor : b.executor;
    this.loopsOnExecutor = b.loopThreads == null;
    this.loops = loopsOnExecutor ? executor : EngineThreads.eachOnItsOwn(b.loopThreads);
    boolean coalesced = config.wakeMode() == WakeMode.COALESCED;
    SentWakes sentWakes = new SentWakes();
    this.sender = coalesced ? new WakeSender(dataSource, sentWakes) : null;
    this.localAfterCommit = coalesced ? new LocalAfterCommit(this::committed) : null;
    Transactions tx =
        b.transactions != null
            ? b.transactions
            : new JdbcTransactions(dataSource, localAfterCommit);
    this.transactions = tx;
    AfterCommit afterCommit = b.afterCommit != null ? b.afterCommit : localAfterCommit;
    // Only a running engine has a sender: before its start and after its stop (and always in
    // IN_TRANSACTION), the database wakes.
    this.jobs =
        new Jobs(
            config.workerId(),
            config.maxPayloadBytes(),
            b.tracing,
            config::maxAttempts,
            coalesced ? c -> started ? afterCommit.pending(c) : null : AfterCommit.NONE,
            b.cipher,
            config::maxWait);
    this.schedules = new ScheduleBook(jobs, config.maxPayloadBytes());
    this.flow = new FlowControl(config, dataSource);
    this.release = new StopRelease(config, dataSource, store);
    this.single = newJobRunner(b, tx);
    boolean hasCapsules = !config.capsules().isEmpty();
    this.notifier =
        hasCapsules && b.listenerConnections != null
            ? newNotifier(
                schema.wrap(b.listenerConnections), b.wakes != null ? b.wakes : this::wake)
            : null;
    if (notifier != null && sender != null) {
      notifier.onEchoesOf(sentWakes);
    }
    this.ticker = hasCapsules ? newTicker() : null;
    this.node = hasCapsules ? newNodeReporter() : null;
    this.capsules =
        newCapsules(
            new BatchRunner(single, store, dataSource, tx, b.events, config.execution().lease()));
    // Always there: schedules made through the API need the leader's tick without any config.
    this.cron =
        new ScheduleEnqueuer(
            config.crons(), store, tx, config.ticker().ceiling(), jobs::scheduleRun);
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
            config.execution().deadNodeCheckInterval(),
            config.execution().nothingToRescueFor());
    this.elector =
        new Elector(
            dataSource,
            config.workerId(),
            config.elector(),
            maintainer::leadershipChanged,
            maintainer::renewalSeen,
            this::connectionLost);
    listenToChanges();
    rideOnTicks();
  }

  private Notifier newNotifier(ListenerConnections connections, Consumer<Wake> wakes) {
    return new Notifier(
        connections,
        config.queues(),
        wakes,
        this::listenerChanged,
        single::cancelsHeard, // the runner checks them, then stops the handlers that are ours
        config.listener(),
        schema);
  }

  private Ticker newTicker() {
    ExecutionConfig execution = config.execution();
    return new Ticker(
        new Ticker.Heartbeat(
            config.workerId(),
            execution.heartbeatInterval(),
            execution.lease(),
            this::jobsAlive,
            notifier,
            maintenance ? Elector.MAINTENANCE : null,
            this::ticked),
        dataSource,
        config.queues(),
        this::listenerState,
        config.ticker(),
        this::route,
        this::connectionLost);
  }

  private NodeReporter newNodeReporter() {
    return new NodeReporter(
        dataSource,
        config.workerId(),
        config.capsules(),
        this::listenerState,
        () -> notifier == null ? null : notifier.backendPid(),
        config.execution().heartbeatTtl());
  }

  private JobRunner newJobRunner(Builder b, Transactions tx) {
    return new JobRunner(
        store,
        dataSource,
        tx,
        b.tracing.around(b.jobs != null ? b.jobs : Engine::noHandler),
        b.handlerTransactions::contains,
        config::retry,
        b.events,
        loops,
        config.retention().deletesCompleted(),
        b.errorDetail,
        b.cipher);
  }

  private List<Capsule> newCapsules(BatchRunner runner) {
    var all = new ArrayList<Capsule>();
    int threadsNeeded = executorThreadsNeeded();
    for (CapsuleConfig cc : config.capsules()) {
      Capsule capsule =
          new Capsule(
              cc,
              new Claimer(cc, config.workerId(), config.execution().lease(), store, dataSource),
              Slots.of(cc, loopsOnExecutor, threadsNeeded),
              config::jobTimeout,
              config.ticker().errorBackoffCeiling(),
              executor,
              runner,
              this::connectionLost);
      capsule.onLimitFreed(flow::limited, flow::freed);
      all.add(capsule);
      for (String q : cc.queues()) {
        capsulesByQueue.computeIfAbsent(q, k -> new ArrayList<>()).add(capsule);
      }
    }
    return List.copyOf(all);
  }

  /** The notifications that are not wakes: schedule, queue and leader changes. */
  private void listenToChanges() {
    if (notifier == null) {
      return;
    }
    // A schedule change's NOTIFY brings the leader's next schedule tick forward (rate-limited).
    notifier.onSchedulesChanged(maintainer::schedulesChanged);
    // A queue's limits or pause changed: the next tick (soon, rate-limited) re-reads the limits
    // and wakes the capsules whose queues have jobs due.
    notifier.onQueuesChanged(this::queuesChanged);
    notifier.onLeaderResigned(elector::resignHeard);
  }

  /** The tick carries the limit re-read, the probe, the leader check and the heartbeat. */
  private void rideOnTicks() {
    if (ticker == null) {
      return;
    }
    ticker.beforeEachTick(flow::rereadIfStale);
    capsules.forEach(c -> c.onClaimed(ticker::nudge));
    elector.followTicks(config.leaseReadSilence());
    if (notifier != null && config.probesRideOnTicks()) {
      notifier.probesOnTicks();
    }
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
   * The threads the executor needs so that no job waits for one: a thread per slot, plus the
   * engine's loops when they run on the executor too (no {@link Builder#loopThreads}).
   */
  public int executorThreadsNeeded() {
    return config.executorThreadsNeeded(loopsOnExecutor);
  }

  public static Builder builder(EngineConfig config, DataSource dataSource) {
    return new Builder(config, dataSource);
  }

  public EngineConfig config() {
    return config;
  }

  /** The schema this engine's instance lives in ({@code pgbus.schema}). */
  public SchemaName schema() {
    return schema;
  }

  /** Starts the notifier, the capsules and (if enabled) the maintainer. Idempotent. */
  public synchronized void start() {
    if (started) {
      return;
    }
    started = true;
    PayloadLimit.publish(config, dataSource);
    QueueMaxWait.publish(config, dataSource);
    flow.publish();
    QueueEncryption.publish(config, jobs.cipher(), dataSource);
    cron.syncConfigAtStart();
    if (node != null) {
      node.started();
    }
    if (notifier != null) {
      notifier.start(loops);
    }
    if (sender != null) {
      sender.start(loops);
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
        Level.INFO,
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
    if (notifier != null && !notifier.stop(LOOP_STOP_WAIT)) {
      LOG.log(
          Level.WARNING,
          "pgbus listener did not stop within {0}",
          Durations.format(LOOP_STOP_WAIT));
    }
    if (node != null) {
      // The row stays, and the ticker beats on, until the jobs are back: a drain longer than
      // two thirds of the heartbeat TTL must not let the leader rescue jobs that still run here.
      node.stopping();
    }
    if (sender != null) {
      sender.stop(LOOP_STOP_WAIT); // sends what is waiting first
    }
    maintainer.stop(LOOP_STOP_WAIT); // at once when it never started (no maintenance)
    elector.stop(LOOP_STOP_WAIT);
    long deadline = System.nanoTime() + config.execution().drainTimeout().toNanos();
    int left = 0;
    for (Capsule c : capsules) {
      left += c.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    if (left > 0) {
      single.abandonRetries();
      var held = new ArrayList<ClaimedJob>();
      capsules.forEach(c -> held.addAll(c.handBack()));
      release.handBack(held);
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
              Level.WARNING,
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
    if (release.whatStillRuns() && node != null) {
      node.stopped();
    }
    if (ownedExecutor != null) {
      ownedExecutor.shutdown();
    }
    return left;
  }

  /**
   * Routes a wake to the capsules that read one of its queues, and to no other. A wake for everyone
   * (after a listener reconnect) becomes one poll, which then wakes exactly the capsules whose
   * queues have work.
   */
  public void wake(Wake wake) {
    if (wake.everyone()) {
      // LISTEN never replays: a change announced while the listener was away is re-read too.
      flow.changed();
      if (ticker != null) {
        ticker.tickNow();
      }
      return;
    }
    route(wake);
  }

  private void route(Wake wake) {
    var targets = new LinkedHashSet<Capsule>();
    for (String q : wake.now()) {
      targets.addAll(capsulesByQueue.getOrDefault(q, List.of()));
    }
    for (String q : wake.later().keySet()) {
      targets.addAll(capsulesByQueue.getOrDefault(q, List.of()));
    }
    targets.forEach(c -> c.wake(wake));
  }

  /**
   * An enqueuing transaction committed ({@link WakeMode#COALESCED}): wakes this JVM's capsules that
   * read its queues in-process, at once, and hands the queues to the sender, which NOTIFYs the
   * other JVMs within about a millisecond, coalesced with the other commits of that millisecond.
   * Called by {@link AfterCommit}'s wakes only after a commit; cheap, never blocks on the database.
   */
  public void committed(Wake wake) {
    if (sender == null) {
      return; // IN_TRANSACTION: the database notified inside the transaction
    }
    localWakes.incrementAndGet();
    route(wake);
    sender.send(wake);
  }

  /**
   * The engine's transactions: in Java SE, unless the builder was given others, {@link
   * JdbcTransactions} on its datasource, whose enqueues wake after the commit in {@link
   * WakeMode#COALESCED} ({@code Engine.transactions().inNewTransaction(c -> { ...your writes...;
   * engine.jobs().enqueue(c, job); })}).
   */
  public Transactions transactions() {
    return transactions;
  }

  /** The engine's own after-commit wakes (Java SE), or null in IN_TRANSACTION. */
  LocalAfterCommit localAfterCommit() {
    return localAfterCommit;
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
    if (sender != null) {
      all.add(sender);
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
        maintainer.expired(),
        cron.enqueued(),
        maintainer.scheduleWakes(),
        notifier == null ? 0 : notifier.scheduleChanges(),
        notifier == null ? 0 : notifier.queueChanges(),
        flow.reads(),
        sender == null
            ? new EngineStatus.Wakes(config.wakeMode(), 0, 0, 0, 0, 0, 0, 0)
            : sender.status(config.wakeMode(), localWakes.get()));
  }

  /** The schedule operations ({@code pgbus.schedule}); they need no running engine. */
  public ScheduleBook schedules() {
    return schedules;
  }

  /**
   * Someone announced a change of a queue's limits or pause ({@value Channels#QUEUES}, on the
   * notifier's thread). The announcement is untrusted and carries nothing: it only marks the limits
   * stale and asks for a tick, at most one per {@link Ticker#SOON_GAP}, which re-reads them ({@link
   * FlowControl#rereadIfStale}) and wakes the capsules whose queues have jobs due (a resume, a
   * raised limit). A pause needs nothing more: every claim reads the pauses.
   */
  private void queuesChanged() {
    flow.changed();
    if (ticker != null) {
      ticker.tickSoon();
    }
  }

  /** Every limited queue of the database, its limits and what waits on them. */
  public List<QueueLimitStatus> queueLimits() {
    try (Connection c = dataSource.getConnection()) {
      return queueLimits(c);
    } catch (SQLException e) {
      throw new PgbusException("pgbus could not read the queue limits: " + e.getMessage(), e);
    }
  }

  /**
   * The queue limits read on the caller's connection: a caller that already holds one (readiness)
   * must not take a second from the pool, or concurrent callers starve a small pool.
   */
  public List<QueueLimitStatus> queueLimits(Connection c) throws SQLException {
    return flow.statuses(c);
  }

  private static Outcome noHandler(RunningJob job, Connection c) {
    throw new IllegalStateException(
        "no handler is registered for queue '" + job.queue() + "' (job " + job.id() + ")");
  }

  /** Wires an engine. Only the config and the datasource are required. */
  public static final class Builder {
    private final EngineConfig config;
    private final DataSource dataSource;
    private Executor executor;
    private ThreadFactory loopThreads;
    private Transactions transactions;
    private ListenerConnections listenerConnections;
    private JobFunction jobs;
    private Set<String> handlerTransactions = Set.of();
    private Consumer<Wake> wakes;
    private AfterCommit afterCommit;
    private JobEvents events = JobEvents.NONE;
    private boolean maintenance = true;
    private ErrorDetail errorDetail = ErrorDetail.STACK;
    private JobTracing tracing = JobTracing.NONE;
    private JobCipher cipher = JobCipher.NONE;
    private SchemaName schema = SchemaName.DEFAULT;

    private Builder(EngineConfig config, DataSource dataSource) {
      this.config = Objects.requireNonNull(config, "config");
      this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** Runs loops and jobs; default: a cached pool the engine owns and shuts down on stop. */
    public Builder executor(Executor v) {
      executor = v;
      return this;
    }

    /**
     * Makes the threads of the long-running loops (listener, ticker, capsule claim loops, leader,
     * maintenance, job-timeout watchdog), which then stay off the executor: it runs only jobs. In a
     * container, the ManagedThreadFactory. Default: the loops run on the executor.
     */
    public Builder loopThreads(ThreadFactory v) {
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

    /**
     * Tells when an enqueue's transaction commits, so that its wake goes out after the commit
     * ({@link WakeMode#COALESCED}); a container's transaction manager. Default: the engine's own,
     * for auto-commit connections and {@link JdbcTransactions}; any other connection's enqueue
     * leaves its wake to the database.
     */
    public Builder afterCommit(AfterCommit v) {
      afterCommit = Objects.requireNonNull(v);
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

    /**
     * Seals the payloads, results and errors of the queues that encrypt (default {@link
     * JobCipher#NONE}).
     */
    public Builder cipher(JobCipher v) {
      cipher = Objects.requireNonNull(v);
      return this;
    }

    /**
     * The schema of this instance (default {@link SchemaName#DEFAULT}): the engine maps its
     * datasource's and its listener's connections onto it, and its channels and lock keys.
     */
    public Builder schema(SchemaName v) {
      schema = Objects.requireNonNull(v);
      return this;
    }

    public Engine build() {
      return new Engine(this);
    }
  }
}

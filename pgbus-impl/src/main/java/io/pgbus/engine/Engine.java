package io.pgbus.engine;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.InvalidJobException;
import io.pgbus.JobQueue;
import io.pgbus.QueueNames;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The engine: one notifier, the capsules, and the maintainer, wired to the ports. It runs the same
 * in Java SE and inside a container; the container adapter supplies the executor, the transaction
 * runner and the handler function.
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
  private final QueueStore queueStore = new QueueStore();
  private final AuditStore auditStore = new AuditStore();
  private final ExecutorService ownedExecutor;
  private final java.util.concurrent.Executor executor;
  // Starts the long-running loops: on threads of their own when a thread factory was given, so
  // they never hold a thread of the executor that runs the jobs.
  private final java.util.concurrent.Executor loops;
  private final boolean loopsOnExecutor;
  private final List<Capsule> capsules = new ArrayList<>();
  private final Map<String, List<Capsule>> capsulesByQueue = new HashMap<>();
  private final Notifier notifier;
  private final Poller poller;
  private final Elector elector;
  private final Maintainer maintainer;
  private final JobRunner single;
  private final CronEnqueuer cron;
  private final boolean maintenance;
  private final JobTracing tracing;
  private volatile boolean started;

  private Engine(Builder b) {
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
    this.tracing = b.tracing;
    JobFunction jobs = tracing.around(b.jobs != null ? b.jobs : Engine::noHandler);
    Consumer<Wake> wakes = b.wakes != null ? b.wakes : this::wake;
    this.notifier =
        b.listenerConnections == null || config.capsules().isEmpty()
            ? null
            : new Notifier(
                b.listenerConnections, config.queues(), wakes, this::listenerChanged, config);
    this.poller =
        config.capsules().isEmpty()
            ? null
            : new Poller(
                store,
                dataSource,
                config.queues(),
                this::listenerState,
                config,
                this::route,
                this::connectionLost);
    this.single =
        new JobRunner(
            store,
            dataSource,
            tx,
            jobs,
            config.retry(),
            b.events,
            loops,
            config.deletesCompleted(),
            b.errorDetail);
    BatchRunner runner = new BatchRunner(single, store, dataSource, tx, b.events, config.lease());
    for (CapsuleConfig cc : config.capsules()) {
      Capsule capsule =
          new Capsule(
              cc,
              config,
              store,
              dataSource,
              executor,
              loopsOnExecutor,
              runner,
              this::connectionLost);
      capsules.add(capsule);
      for (String q : cc.queues()) {
        capsulesByQueue.computeIfAbsent(q, k -> new ArrayList<>()).add(capsule);
      }
    }
    this.maintenance = b.maintenance;
    Maintainer[] m = new Maintainer[1];
    this.elector =
        new Elector(
            dataSource,
            config.workerId(),
            config.leaderTtl(),
            () -> m[0].leadershipChanged(),
            this::connectionLost);
    this.cron = config.crons().isEmpty() ? null : new CronEnqueuer(config.crons(), store, tx);
    this.maintainer = new Maintainer(dataSource, store, config, elector::isLeader, cron);
    m[0] = maintainer;
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
    if (notifier != null) {
      notifier.start(loops);
    }
    for (Capsule c : capsules) {
      c.start(loops);
    }
    if (poller != null) {
      poller.start(loops);
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

  /**
   * Stops claiming, stops the listener and the maintainer, and waits up to the drain timeout for
   * running handlers. Jobs still running after that keep their lease and are rescued later. Returns
   * how many jobs were still running.
   */
  public synchronized int stop() {
    if (!started) {
      return 0;
    }
    started = false;
    capsules.forEach(Capsule::stop); // stops claiming at once; running jobs go on
    if (poller != null) {
      poller.stop();
    }
    if (notifier != null && !notifier.stop(Duration.ofSeconds(5))) {
      LOG.log(System.Logger.Level.WARNING, "pgbus listener did not stop within 5 s");
    }
    maintainer.stop(Duration.ofSeconds(5)); // at once when it never started (no maintenance)
    elector.stop(Duration.ofSeconds(5));
    long deadline = System.nanoTime() + config.drainTimeout().toNanos();
    int left = 0;
    for (Capsule c : capsules) {
      left += c.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    if (left > 0) {
      single.abandonRetries();
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus stopped with {0} job(s) still running after the {1} drain; lease rescue will"
              + " return them",
          left,
          config.drainTimeout());
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
      if (poller != null) {
        poller.pollNow();
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

  /**
   * Inserts a job in the connection's current transaction and returns its id; for a job whose
   * unique key a waiting or running job already has, that job's id (see {@link #enqueueIfAbsent}).
   */
  public long enqueue(Connection c, NewJob job) {
    return enqueueIfAbsent(c, job).id();
  }

  /**
   * Inserts a job in the connection's current transaction unless its unique key is taken by a
   * waiting or running job of its queue; a duplicate inserts and notifies nothing and leaves the
   * transaction usable.
   */
  public Enqueued enqueueIfAbsent(Connection c, NewJob job) {
    checkPayload(job);
    checkRunAt(job, Instant.now());
    try {
      return store.jobInsertIfAbsent(c, job, tracing.capture());
    } catch (SQLException e) {
      throw Failures.of(job.queue(), "enqueue a job", e);
    }
  }

  /**
   * Inserts many jobs in one statement; ids in input order. A job whose unique key is taken gets
   * the existing job's id.
   */
  public List<Long> enqueueAll(Connection c, List<NewJob> jobs) {
    if (jobs.isEmpty()) {
      return List.of();
    }
    if (jobs.size() > JobQueue.MAX_BATCH_SIZE) {
      String queue = jobs.get(0).queue();
      throw new InvalidJobException(
          queue,
          "a batch of "
              + jobs.size()
              + " jobs for queue '"
              + queue
              + "' is over the limit of "
              + JobQueue.MAX_BATCH_SIZE
              + " jobs per enqueueAll: split it into batches of at most "
              + JobQueue.MAX_BATCH_SIZE);
    }
    Instant now = Instant.now();
    for (NewJob job : jobs) {
      checkPayload(job);
      checkRunAt(job, now);
    }
    try {
      return store.jobInsertMany(c, jobs, tracing.capture());
    } catch (SQLException e) {
      throw Failures.of(jobs.get(0).queue(), "enqueue " + jobs.size() + " jobs", e);
    }
  }

  /**
   * Pauses a queue in the connection's transaction: from its commit on, no engine on the database
   * claims the queue's jobs; enqueue goes on, and running jobs finish. Returns false when the queue
   * was paused already.
   */
  public boolean pause(Connection c, String queue) {
    return pause(c, queue, null);
  }

  /**
   * {@link #pause(Connection, String)}, audited as {@code actor} (the caller principal's name;
   * {@code null}: the database role).
   */
  public boolean pause(Connection c, String queue, String actor) {
    QueueNames.require(queue);
    try {
      return queueStore.queuePause(c, queue, config.workerId(), actor);
    } catch (SQLException e) {
      throw Failures.of(queue, "pause queue '" + queue + "'", e);
    }
  }

  /**
   * Resumes a paused queue in the connection's transaction; at commit, its channel gets a wake-up
   * so every engine claims the waiting jobs at once. Returns false when it was not paused.
   */
  public boolean resume(Connection c, String queue) {
    return resume(c, queue, null);
  }

  /** {@link #resume(Connection, String)}, audited as {@code actor} ({@code null}: the role). */
  public boolean resume(Connection c, String queue, String actor) {
    QueueNames.require(queue);
    try {
      return queueStore.queueResume(c, queue, actor);
    } catch (SQLException e) {
      throw Failures.of(queue, "resume queue '" + queue + "'", e);
    }
  }

  public boolean isPaused(Connection c, String queue) {
    QueueNames.require(queue);
    try {
      return queueStore.queueIsPaused(c, queue);
    } catch (SQLException e) {
      throw Failures.of(queue, "read the pause of queue '" + queue + "'", e);
    }
  }

  /** Every paused queue of the database, by name. */
  public List<String> pausedQueues(Connection c) {
    try {
      return queueStore.queuesPaused(c);
    } catch (SQLException e) {
      throw Failures.of(null, "read the paused queues", e);
    }
  }

  public boolean cancel(Connection c, long jobId) {
    return cancel(c, jobId, null);
  }

  /** Cancels a waiting job, audited as {@code actor} ({@code null}: the database role). */
  public boolean cancel(Connection c, long jobId, String actor) {
    try {
      return store.jobCancel(c, jobId, actor);
    } catch (SQLException e) {
      throw Failures.of(null, "cancel job " + jobId, e);
    }
  }

  public boolean replay(Connection c, long jobId) {
    return replay(c, jobId, null);
  }

  /** Replays a dead job, audited as {@code actor} ({@code null}: the database role). */
  public boolean replay(Connection c, long jobId, String actor) {
    try {
      return store.jobReplayDead(c, jobId, actor);
    } catch (SQLException e) {
      throw Failures.of(null, "replay job " + jobId, e);
    }
  }

  /** The audit trail of a job, oldest first. */
  public List<AuditEntry> history(Connection c, long jobId) {
    try {
      return auditStore.auditOfJob(c, jobId);
    } catch (SQLException e) {
      throw Failures.of(null, "read the audit trail of job " + jobId, e);
    }
  }

  /** The latest {@code limit} audit entries of a queue, newest first. */
  public List<AuditEntry> history(Connection c, String queue, int limit) {
    QueueNames.require(queue);
    if (limit < 1 || limit > 1000) {
      throw new IllegalArgumentException(
          "audit history limit " + limit + " is out of range: use 1 to 1000");
    }
    try {
      return auditStore.auditOfQueue(c, queue, limit);
    } catch (SQLException e) {
      throw Failures.of(queue, "read the audit trail of queue '" + queue + "'", e);
    }
  }

  /** The listener's state; DEGRADED-equivalent polling applies when there is no listener. */
  public ListenerState listenerState() {
    return notifier == null ? ListenerState.DEGRADED : notifier.state();
  }

  /** The notifier, or null when this engine has no capsules or no listener connections. */
  public Notifier notifier() {
    return notifier;
  }

  public List<Capsule> capsules() {
    return List.copyOf(capsules);
  }

  /** Every long-running loop of this engine, started or not (for the shared stop test). */
  List<Loop> allLoops() {
    var all = new ArrayList<Loop>(capsules);
    if (notifier != null) {
      all.add(notifier);
    }
    if (poller != null) {
      all.add(poller);
    }
    all.add(elector);
    all.add(maintainer);
    return all;
  }

  public boolean running() {
    return started;
  }

  public JobStore store() {
    return store;
  }

  /** Jobs the maintainer has rescued from expired leases. */
  public long rescued() {
    return maintainer.rescued();
  }

  private void listenerChanged(ListenerState state) {
    if (state == ListenerState.RECONNECTING) {
      connectionLost();
    }
    if (poller != null) {
      poller.nudge();
    }
  }

  /**
   * A loop lost the database, or the listener reconnects: see {@link Maintainer#connectionLost}.
   */
  private void connectionLost() {
    maintainer.connectionLost();
  }

  /** Whether this engine is the elected maintenance leader now. */
  public boolean leader() {
    return elector.isLeader();
  }

  /** Poll statements issued by this engine's poller (0 without capsules). */
  public long polls() {
    return poller == null ? 0 : poller.polls();
  }

  /** Statements issued by the leader election of this engine. */
  public long electionStatements() {
    return elector.statements();
  }

  /** Cron runs this engine has enqueued (only while it was the leader). */
  public long cronRunsEnqueued() {
    return cron == null ? 0 : cron.enqueued();
  }

  /** Maintenance rounds this engine has run (only while it was the leader). */
  public long maintenanceRounds() {
    return maintainer.rounds();
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

  private void checkPayload(NewJob job) {
    String p = job.payloadJson();
    int limit = config.maxPayloadBytes();
    if (p.length() > limit / 3 && p.getBytes(StandardCharsets.UTF_8).length > limit) {
      throw new InvalidJobException(
          job.queue(),
          "payload for queue '"
              + job.queue()
              + "' is "
              + p.getBytes(StandardCharsets.UTF_8).length
              + " bytes, over the limit of "
              + limit
              + " bytes: store large data in your own table and enqueue its key, or raise"
              + " pgbus.max-payload-bytes");
    }
  }

  /**
   * A runAt is absolute, so only here, against the clock, can it be held to the schedule horizon
   * (the delay is checked where it is set, in EnqueueOptions).
   */
  static void checkRunAt(NewJob job, Instant now) {
    Instant runAt = job.options().runAt();
    if (runAt != null
        && Duration.between(now, runAt).compareTo(EnqueueOptions.MAX_SCHEDULE_AHEAD) > 0) {
      throw new InvalidJobException(
          job.queue(),
          "runAt "
              + runAt
              + " for queue '"
              + job.queue()
              + "' is too far ahead: at most "
              + EnqueueOptions.MAX_SCHEDULE_AHEAD.toDays()
              + " days (100 years, EnqueueOptions.MAX_SCHEDULE_AHEAD) after now; to park a job"
              + " for good, cancel it, or keep the date in your own table and enqueue nearer the"
              + " time");
    }
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
     * Makes the threads of the long-running loops (listener, poller, capsule claim loops, leader,
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

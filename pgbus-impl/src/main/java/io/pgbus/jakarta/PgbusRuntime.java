package io.pgbus.jakarta;

import io.pgbus.PgbusException;
import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.DatabaseProblem;
import io.pgbus.engine.DeployCheck;
import io.pgbus.engine.Doctor;
import io.pgbus.engine.Durations;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.ErrorBackoff;
import io.pgbus.engine.ExecutionConfig;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.ListenerState;
import io.pgbus.engine.Loop;
import io.pgbus.engine.MigrationRoute;
import io.pgbus.engine.PoolerGuard;
import io.pgbus.engine.QueueLimitStatus;
import io.pgbus.engine.ScheduleBook;
import io.pgbus.engine.Schema;
import io.pgbus.engine.SchemaWindow;
import io.pgbus.engine.StopLog;
import io.pgbus.engine.Wake;
import io.pgbus.engine.WakeSignal;
import io.pgbus.health.PgbusHealth;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one pgbus runtime of this application: a startup singleton that owns the engine, and with it
 * the only LISTEN connection in the JVM. The engine's notifier fires each wake as a CDI {@link
 * Wake} event; {@link WakeRouter}, its only observer, hands it to the capsules that read the
 * notified queues.
 *
 * <p>A database that is down at deploy does not fail the deployment: the runtime keeps trying to
 * reach it (and migrate the schema) in the background, readiness says why it is not ready, and the
 * engine starts by itself once the database answers. Bad configuration does fail it.
 */
@Singleton
@Startup
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
public class PgbusRuntime {

  private static final System.Logger LOG = System.getLogger(PgbusRuntime.class.getName());
  private static final Duration STATUS_CACHE = Duration.ofSeconds(5);

  /** How long a doctor's report is served again: repeated calls must not hammer the database. */
  static final Duration DOCTOR_CACHE = Duration.ofSeconds(5);

  /** The first wait between attempts to reach the database at start, doubling from there. */
  private static final Duration BOOTSTRAP_BACKOFF_MIN = Duration.ofMillis(500);

  /**
   * The longest wait between attempts to reach the database at start: readiness turns UP at most
   * this long after the database returns. One failed connection attempt per 5 s costs nothing.
   */
  private static final Duration BOOTSTRAP_BACKOFF_MAX = Duration.ofSeconds(5);

  @Inject PgbusResources resources;
  @Inject HandlerRegistry handlers;
  @Inject JobTransactions transactions;
  @Inject Event<Wake> wakes;
  @Inject WakeRouter router;
  @Inject UndeployDrain undeploy;

  private Engine engine;
  private PgbusMetrics metrics = PgbusMetrics.NONE;
  private final Bootstrap bootstrap = new Bootstrap();
  private volatile String problem = "starting";
  private volatile String schemaVersion;
  // What the deploy gate blocks on, as kinds and queues (readiness shows it); null when not.
  private volatile String gateBlocked;
  // The last window read that this build is outside of (readiness names its versions); else null.
  private volatile SchemaWindow outside;
  private volatile Status cachedStatus;
  private volatile long cachedAt;
  private final Object statusLock = new Object();
  private final Object doctorLock = new Object();
  private Doctor.Report doctorReport; // guarded by doctorLock
  private long doctorAt; // guarded by doctorLock
  private final ProblemLog problems = new ProblemLog(LOG);
  private Runnable healthWithdrawal = () -> {};
  private final AtomicBoolean stopping = new AtomicBoolean();

  /** What readiness reports. */
  public record Status(boolean ready, String reason, Map<String, Object> data) {}

  @PostConstruct
  void start() {
    PgbusSettings settings = resources.settings();
    for (String q : settings.engine().queues()) {
      if (!handlers.queues().contains(q)) {
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus: a capsule reads queue ''{0}'' but no JobHandler has @Handles(\"{0}\"); its"
                + " jobs will fail until one is deployed",
            q);
      }
    }
    metrics = PgbusMetrics.load(settings.metrics());
    JobLogFields logFields = JobLogFields.of(PgbusRuntime.class.getClassLoader());
    RunAsEnqueuer runAs =
        RunAsEnqueuer.of(resources.runAsQueues(), PgbusRuntime.class.getClassLoader());
    EngineConfig config;
    try {
      // pgbus.queue.<name>.* wins over @Handles, attribute by attribute.
      config = settings.engine().withPolicyDefaults(handlers.policies());
    } catch (InvalidConfigException e) {
      throw new PgbusException(
          "pgbus: " + e.keyedMessage() + " (the value is from that key or from @Handles)");
    }
    Engine.Builder builder =
        Engine.builder(config, resources.dataSource())
            .schema(resources.schema())
            .events(metrics.jobEvents())
            .executor(resources.executor())
            .loopThreads(resources.threadFactory())
            .transactions(transactions)
            .listenerConnections(resources.listenerConnections())
            .jobs(
                (job, tx) -> {
                  logFields.enter(job.claimed());
                  try {
                    return runAs.run(job, () -> handlers.invoke(job));
                  } finally {
                    logFields.exit();
                  }
                })
            .wakes(wakes::fire)
            .afterCommit(new JtaAfterCommit(router::committed))
            .errorDetail(settings.errorDetail())
            .cipher(resources.cipher())
            .tracing(PgbusTracing.load())
            .handlerTransactions(handlers.handlerTransactions());
    try {
      engine = builder.build();
    } catch (InvalidConfigException e) {
      throw new PgbusException("pgbus: " + e.keyedMessage());
    }
    router.attach(engine);
    undeploy.attach(this::shutdown);
    healthWithdrawal =
        PgbusHealth.publish(
            () -> HealthResponses.readiness(this), () -> HealthResponses.liveness(this));
    bootstrap.start(resources.executor());
  }

  /**
   * Where pgbus reports counters and timers; {@link PgbusMetrics#NONE} without MP Metrics or
   * OpenTelemetry.
   */
  public PgbusMetrics metrics() {
    return metrics;
  }

  /**
   * Reaches the database, migrates and checks the schema, then starts the engine and ends; retries
   * until then, or until the application stops.
   */
  private final class Bootstrap extends Loop {
    @Override
    protected void loop() throws InterruptedException {
      bootstrap(signal());
    }
  }

  private void bootstrap(WakeSignal signal) throws InterruptedException {
    ErrorBackoff waits = ErrorBackoff.waits(BOOTSTRAP_BACKOFF_MIN, BOOTSTRAP_BACKOFF_MAX);
    long backoffMs;
    boolean traced = false;
    while (!signal.stopped()) {
      try {
        // Before any pgbus statement (Flyway's too): behind a transaction-mode pooler they are
        // unprepared from the first (PoolerGuard).
        PoolerGuard.Session session = resources.inspectPooler();
        if (resources.settings().migrate()) {
          try {
            // Behind a transaction-mode pooler over the listener's direct connection: a
            // migration needs a session (MigrationRoute).
            Schema.migrate(
                MigrationRoute.choose(
                    session, resources.dataSource(), () -> resources.listenerConnections().open()),
                BuildVersion.current(),
                resources.schema());
          } catch (RuntimeException e) {
            throw StartFailure.migration(e);
          }
        }
        // Inside this build's window the engine starts, also on a newer schema (a newer build
        // migrated it mid-rollout): docs/schema.md, "The compatibility window".
        SchemaWindow window;
        try (Connection c = resources.dataSource().getConnection()) {
          window = SchemaWindow.read(c);
        }
        schemaVersion = window.installed();
        outside = window.inside() ? null : window;
        if (outside != null) {
          throw StartFailure.outsideWindow(window);
        }
        deployGate();
        synchronized (this) {
          if (!signal.stopped()) {
            engine.start();
          }
        }
        problem = null;
        cachedStatus = null;
        problems.solved();
        afterStart(signal);
        return;
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        // No failure ends the bootstrap: it retries until the database answers or the
        // application stops. Health shows only a category; the details go to the log. A failure
        // that is not the database's is a bug: ERROR, with its trace once.
        problem = StartFailure.categoryOf(e);
        cachedStatus = null;
        backoffMs = waits.nextWait();
        if (e instanceof StartFailure || causedBySql(e)) {
          problems.seen("pgbus cannot start yet, retrying every few seconds", problem, e);
        } else {
          String message = "pgbus cannot start yet (" + e + "); retrying in " + backoffMs + " ms";
          if (traced) {
            LOG.log(System.Logger.Level.ERROR, message);
          } else {
            traced = true;
            LOG.log(System.Logger.Level.ERROR, message, e);
          }
        }
      }
      if (!signal.sleep(backoffMs)) {
        return;
      }
    }
  }

  /**
   * The deploy gate (pgbus.deploy-check), before the engine starts: under {@code fail} a blocking
   * finding ends this attempt (readiness DOWN, retried with the bootstrap: a queue may drain, a
   * reader come back); otherwise the findings are logged and the engine starts.
   */
  private void deployGate() throws java.sql.SQLException, StartFailure {
    DeployCheck.Mode mode = resources.settings().deployCheck();
    if (mode == DeployCheck.Mode.OFF) {
      return;
    }
    List<DeployCheck.Finding> findings;
    try (Connection c = resources.dataSource().getConnection()) {
      findings = DeployCheck.run(c, engine.config(), handlers.queues(), this::payloadMismatch);
    }
    List<DeployCheck.Finding> blocking = DeployCheck.blocking(findings);
    if (mode == DeployCheck.Mode.FAIL && !blocking.isEmpty()) {
      gateBlocked = String.join(", ", blocking.stream().map(DeployCheck.Finding::summary).toList());
      throw StartFailure.deployCheck(DeployCheck.describe(blocking));
    }
    gateBlocked = null;
    if (findings.isEmpty()) {
      LOG.log(System.Logger.Level.INFO, "pgbus deploy check: no findings");
    } else {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus deploy check ({0}={1}): {2}",
          PgbusSettings.DEPLOY_CHECK_KEY,
          mode.name().toLowerCase(java.util.Locale.ROOT),
          DeployCheck.describe(findings));
    }
  }

  /** The doctor's "deploy check": the gate run now, whatever the mode. */
  /**
   * Whether a waiting payload maps onto its handler's type, read as the handler will read it: a
   * sealed one opened first (an encrypting queue), and one this build cannot open named as such.
   */
  private String payloadMismatch(String queue, String payload) {
    if (!JobCipher.sealed(payload)) {
      return handlers.payloadMismatch(queue, payload);
    }
    try {
      return handlers.payloadMismatch(queue, resources.cipher().openPayload(queue, 0, payload));
    } catch (PgbusException e) {
      return "an encrypted payload this build cannot open: " + e.getMessage();
    }
  }

  private Doctor.Check deployCheck() {
    DeployCheck.Mode mode = resources.settings().deployCheck();
    try (Connection c = resources.dataSource().getConnection()) {
      return DeployCheck.check(
          DeployCheck.run(c, engine.config(), handlers.queues(), this::payloadMismatch), mode);
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING, "pgbus doctor: the deploy check failed: {0}", e.toString());
      return new Doctor.Check(
          "deploy check",
          Doctor.Status.WARN,
          "could not run: " + DatabaseProblem.of(e),
          "see the schema and database checks");
    }
  }

  /**
   * Metrics and the start-up doctor report, once the engine runs: neither may send the bootstrap
   * back to retrying (which would report the database as not ready while the engine runs).
   */
  private void afterStart(WakeSignal signal) throws InterruptedException {
    try {
      metrics.bind(engine, resources.dataSource());
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "pgbus could not bind its metrics; it runs without", e);
    }
    logDoctor(signal);
  }

  private static boolean causedBySql(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException) {
        return true;
      }
    }
    return false;
  }

  // Without a transaction: the stop drains and then releases the jobs still held, on connections
  // of the JTA datasource in transactions of their own. In the container's lifecycle transaction
  // (a CMT singleton's default) Liberty refused that release (DSRA9350E: setAutoCommit during a
  // global transaction), and the jobs waited for their leases (UndeployDrainIT).
  //
  // On WildFly a no-op: UndeployDrain stopped the runtime earlier, when the application context
  // ended (WildFly runs this method only after every job call returned).
  @PreDestroy
  @TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
  void stop() {
    shutdown("the runtime is destroyed");
  }

  /** Stops the runtime once, from whichever hook comes first ({@code why} names it). */
  private void shutdown(String why) {
    if (engine == null || !stopping.compareAndSet(false, true)) {
      return;
    }
    StopLog.log(
        LOG,
        System.Logger.Level.INFO,
        "pgbus engine {0} stopping ({1}): no more claims; running jobs get {2} ({3})",
        engine.config().workerId(),
        why,
        Durations.format(engine.config().execution().drainTimeout()),
        ExecutionConfig.DRAIN_TIMEOUT.key());
    healthWithdrawal.run();
    bootstrap.stop();
    synchronized (this) {
      engine.stop();
    }
    metrics.close();
  }

  /** The engine; present from deployment on, running once the database was reached. */
  public Engine engine() {
    return engine;
  }

  /** The job operations; they work from deployment on, whether the engine runs or not. */
  public Jobs jobs() {
    return engine.jobs();
  }

  /** The schedule operations of this runtime's engine ({@code pgbus.schedule}). */
  public ScheduleBook schedules() {
    return engine.schedules();
  }

  /**
   * The doctor's report on this runtime and its database, at most {@link #DOCTOR_CACHE} old: it
   * costs several statements, and callers that ask at once share one run.
   */
  public Doctor.Report doctor() {
    synchronized (doctorLock) {
      if (doctorReport == null || System.nanoTime() - doctorAt >= DOCTOR_CACHE.toNanos()) {
        doctorReport = examine();
        doctorAt = System.nanoTime();
      }
      return doctorReport;
    }
  }

  private Doctor.Report examine() {
    return Doctor.examine(
            engine, resources.dataSource(), resources.poolMax(), PgbusResources.POOL_SIZE_KEY)
        .plus(Doctor.preparedStatements(resources.pooler()))
        .plus(deployCheck());
  }

  // Once at start-up, after the listener had a moment to prove itself.
  private void logDoctor(WakeSignal signal) throws InterruptedException {
    try {
      // Without a listener the state is never STARTING: no wait.
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (engine.status().listener().state() == ListenerState.STARTING
          && System.nanoTime() < deadline) {
        if (!signal.sleep(50)) {
          return;
        }
      }
      Doctor.Report report = examine();
      LOG.log(
          report.status() == Doctor.Status.OK
              ? System.Logger.Level.INFO
              : System.Logger.Level.WARNING,
          report.toText());
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      LOG.log(System.Logger.Level.WARNING, "pgbus doctor failed: {0}", e.getMessage());
    }
  }

  /** Readiness: database reachable, schema inside this build's window, engine running. */
  public Status status() {
    // The database check is cached for a few seconds (a probe every second must not become a
    // query every second); the listener state and mode are always current.
    // Probes that arrive together share one check: each check holds a pool connection, and a
    // burst of probes must not take the pool from the engine.
    Status s = cachedStatus;
    if (s == null || System.nanoTime() - cachedAt >= STATUS_CACHE.toNanos()) {
      synchronized (statusLock) {
        s = cachedStatus;
        if (s == null || System.nanoTime() - cachedAt >= STATUS_CACHE.toNanos()) {
          s = computeStatus();
          cachedAt = System.nanoTime();
          cachedStatus = s;
        }
      }
    }
    var data = new LinkedHashMap<>(s.data());
    EngineStatus now = engine.status();
    ListenerState listener = now.listener().state();
    data.put("listener", listenerLabel(listener));
    data.put("mode", listener.delivering() ? "notify" : "polling");
    // A stalled capsule claims nothing for its queues in this JVM: not ready, and the data names
    // it with a short category (the log has the details).
    // Never UP while pgbus's statements fail on a pooler's server connections (issue #33).
    String pooler = resources.pooler().problem();
    if (pooler != null && s.ready()) {
      data.put("reason", pooler);
      return new Status(false, pooler, data);
    }
    List<String> stalled = stalledCapsulesWithCause(now);
    if (stalled.isEmpty()) {
      return new Status(s.ready(), s.reason(), data);
    }
    data.put("stalled", String.join(", ", stalled));
    String reason = s.reason() != null ? s.reason() : "capsule stalled";
    data.put("reason", reason);
    return new Status(false, reason, data);
  }

  /**
   * Capsules that do not claim as they should, each as {@code "name (category)"}: its loop ended,
   * it shows no progress, or its claims have failed, for longer than the stall threshold.
   */
  public List<String> stalledCapsulesWithCause() {
    return stalledCapsulesWithCause(engine.status());
  }

  private List<String> stalledCapsulesWithCause(EngineStatus now) {
    if (!now.running()) {
      return List.of();
    }
    Duration threshold = resources.settings().stallThreshold();
    var out = new ArrayList<String>();
    for (EngineStatus.CapsuleStatus c : now.capsules()) {
      String why = c.stall(threshold);
      if (why != null) {
        out.add(c.name() + " (" + why + ")");
      }
    }
    return out;
  }

  private Status computeStatus() {
    var data = new LinkedHashMap<String, Object>();
    EngineStatus now = engine.status();
    ListenerState listener = now.listener().state();
    data.put("listener", listenerLabel(listener));
    data.put("mode", listener.delivering() ? "notify" : "polling");
    data.put("capsules", now.capsules().size());
    String reason = problem;
    if (reason == null) {
      try (Connection c = resources.dataSource().getConnection()) {
        SchemaWindow window = SchemaWindow.read(c);
        schemaVersion = window.installed();
        outside = window.inside() ? null : window;
        reason = window.problem();
        if (reason == null) {
          // Paused queues are intended, so they never make readiness DOWN; they are shown.
          data.put("paused", String.join(",", engine.jobs().pausedQueues(c)));
          // Limits are intended too (V14): shown, never DOWN.
          data.put("limited", QueueLimitStatus.describe(engine.queueLimits(c)));
          problems.solved();
        } else {
          // A running engine whose schema left its window (a newer build's contract migration):
          // the log gets both versions and the fix, once.
          problems.seen("pgbus readiness", reason, StartFailure.outsideWindow(window));
        }
      } catch (Exception e) {
        reason = DatabaseProblem.of(e);
        problems.seen("pgbus readiness", reason, e);
      }
    }
    if (reason == null && !engine.status().running()) {
      reason = "engine stopped";
    }
    data.put("schemaVersion", String.valueOf(schemaVersion));
    SchemaWindow w = outside;
    if (w != null && reason != null) {
      // Both versions, so that a rollout's operator sees which build to deploy.
      data.put("build", BuildVersion.current().toString());
      if (w.oldestServed() != null) {
        data.put("schemaServesFrom", w.oldestServed().toString());
      }
    }
    String blocked = gateBlocked;
    if (blocked != null && !engine.status().running()) {
      data.put("deployCheck", blocked);
    }
    if (reason != null) {
      data.put("reason", reason);
    }
    return new Status(reason == null, reason, data);
  }

  /** Capsules whose loop has not shown progress for longer than the stall threshold. */
  public List<String> stalledCapsules() {
    Duration threshold = resources.settings().stallThreshold();
    EngineStatus now = engine.status();
    return now.capsules().stream()
        .filter(c -> now.running() && c.sinceLastBeat().compareTo(threshold) > 0)
        .map(EngineStatus.CapsuleStatus::name)
        .toList();
  }

  /** Claim counters per capsule, for diagnostics. */
  public Map<String, Long> claimsByCapsule() {
    var claims = new LinkedHashMap<String, Long>();
    for (EngineStatus.CapsuleStatus c : engine.status().capsules()) {
      claims.put(c.name(), c.claims());
    }
    return claims;
  }

  /** The listener state as readiness and the admin API's fleet show it. */
  public static String listenerLabel(ListenerState s) {
    return switch (s) {
      case DELIVERING -> "delivering";
      case DEGRADED -> "degraded";
      case RECONNECTING -> "reconnecting";
      case STARTING -> "starting";
      case FAILED -> "failed (driver missing)";
      case STOPPED -> "stopped";
    };
  }
}

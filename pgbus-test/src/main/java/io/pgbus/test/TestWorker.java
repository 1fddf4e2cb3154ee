package io.pgbus.test;

import io.pgbus.JobHandler;
import io.pgbus.QueueNames;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.CronJob;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JdbcTransactions;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.JobFunction;
import io.pgbus.engine.RetryPolicy;
import io.pgbus.engine.SyncRunner;
import io.pgbus.engine.Transactions;
import java.lang.reflect.Type;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;

/**
 * Runs a queue's jobs on the test's thread, like db-scheduler's {@code ManualScheduler}: each due
 * job goes through the real {@code pgbus.claim_jobs}, its handler and its settle commit in one
 * transaction, a failure is recorded with the retry policy's backoff (or makes the job dead), and
 * the job timeout applies. Nothing runs in the background; the test decides when.
 *
 * <pre>{@code
 * TestClock clock = TestClock.of(dataSource);
 * TestWorker worker = TestWorker.builder(dataSource).handler(new OrderHandler()).clock(clock).build();
 * worker.drain("orders");                  // everything due now, until nothing is
 * clock.advance(Duration.ofHours(1));      // a delayed job becomes due
 * worker.drain("orders");
 * }</pre>
 *
 * In a plain test, handlers are registered on the {@link Builder}: bound by their {@code @Handles}
 * as the runtime binds its beans, payloads mapped by JSON-B. {@link #dataSource()} is what {@code
 * jdbc/pgbus} is to a handler in the container. Inside a container, {@link PgbusTestKit#worker()}
 * builds one that runs the deployment's own handler beans in its JTA transactions.
 *
 * <p>Only one test should drive a queue: a running engine whose capsules read the same queue (in an
 * Arquillian deployment) competes for its jobs.
 */
public final class TestWorker {

  /** The most attempts one {@link #drain(String)} runs before it gives up. */
  public static final int DEFAULT_MAX_RUNS = 1000;

  private final SyncRunner runner;
  private final DataSource reads;
  private final DataSource handlerDataSource;
  private final Set<String> queues;
  private final TestClock clock;
  private final List<CronJob> crons;
  private final JobCipher cipher;

  private TestWorker(Builder b, SyncRunner runner, DataSource handlerDataSource) {
    this.runner = runner;
    this.reads = b.dataSource;
    this.handlerDataSource = handlerDataSource;
    this.queues = Set.copyOf(b.container != null ? b.container.queues() : b.handlers.queues());
    this.clock = b.clock;
    this.crons = List.copyOf(b.crons);
    this.cipher = b.container != null ? b.container.cipher() : b.cipher;
  }

  /** A worker on {@code ds}, the database the code under test enqueues into. */
  public static Builder builder(DataSource ds) {
    return new Builder(Objects.requireNonNull(ds, "ds"), null);
  }

  /** Inside a container: the deployment's handlers, transactions and settings (PgbusTestKit). */
  static Builder inContainer(DataSource jta, Container container) {
    return new Builder(jta, container);
  }

  /**
   * The DataSource to give handlers under test: inside a job this worker runs, its connections are
   * the job's own transaction, so the handler's writes commit exactly when the job completes (as
   * with {@code jdbc/pgbus} in the container); elsewhere it is the worker's DataSource.
   */
  public DataSource dataSource() {
    return handlerDataSource;
  }

  /** The clock this worker's crons run at; fails when it was built without one. */
  public TestClock clock() {
    if (clock == null) {
      throw new IllegalStateException(
          "this TestWorker has no clock: build it with .clock(TestClock.of(dataSource))");
    }
    return clock;
  }

  /** Runs the next due job of {@code queue}, if there is one, to its end. */
  public Optional<JobRun> runNext(String queue) {
    requireHandled(queue);
    ClaimedJob ran = runner.runNext(queue);
    if (ran == null) {
      return Optional.empty();
    }
    EnqueuedJob row;
    try (Connection c = reads.getConnection()) {
      row = JobRows.byId(c, ran.id(), cipher);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "pgbus-test could not read job " + ran.id() + " after its run: " + e, e);
    }
    String state = row == null ? "deleted" : row.state();
    boolean failed = Set.of("retryable", "dead", "cancelled").contains(state);
    return Optional.of(
        new JobRun(
            ran.id(), queue, ran.attempt(), state, failed && row != null ? row.lastError() : null));
  }

  /**
   * Runs due jobs of {@code queue} until none is due, also those the handlers enqueue meanwhile; a
   * failed job's retry is due only after its backoff ({@link TestClock#advance}).
   *
   * @throws IllegalStateException after {@value #DEFAULT_MAX_RUNS} attempts: a handler keeps the
   *     queue busy (enqueues into it, or snoozes for no time)
   */
  public RunReport drain(String queue) {
    return drain(queue, DEFAULT_MAX_RUNS);
  }

  /** As {@link #drain(String)}, giving up after {@code maxRuns} attempts. */
  public RunReport drain(String queue, int maxRuns) {
    if (maxRuns < 1) {
      throw new IllegalArgumentException("maxRuns must be at least 1, was " + maxRuns);
    }
    var runs = new ArrayList<JobRun>();
    while (runs.size() < maxRuns) {
      Optional<JobRun> r = runNext(queue);
      if (r.isEmpty()) {
        return new RunReport(queue, runs);
      }
      runs.add(r.get());
    }
    if (dueNow(queue)) {
      throw new IllegalStateException(
          "queue '"
              + queue
              + "' still has due jobs after "
              + maxRuns
              + " runs: a handler keeps it busy (it enqueues into its own queue, or snoozes for"
              + " no time); the last runs: "
              + runs.subList(runs.size() - Math.min(5, runs.size()), runs.size()));
    }
    return new RunReport(queue, runs);
  }

  /**
   * Enqueues the cron runs due at the clock's instant, as the maintenance leader does: one run per
   * cron, the latest due; a cron's first tick only records its start. Returns the runs enqueued;
   * their jobs are due at once.
   */
  public int runCrons() {
    TestClock c = clock();
    return runner.tickCrons(crons, c.instant(), c.advanced());
  }

  private boolean dueNow(String queue) {
    try (Connection c = reads.getConnection()) {
      return JobRows.dueCount(c, queue) > 0;
    } catch (SQLException e) {
      throw new IllegalStateException(
          "pgbus-test could not count the due jobs of queue '" + queue + "': " + e, e);
    }
  }

  private void requireHandled(String queue) {
    QueueNames.require(queue);
    if (!queues.contains(queue)) {
      throw new IllegalArgumentException(
          "pgbus-test: no handler for queue '"
              + queue
              + "' (handled: "
              + queues
              + "); register one on the builder, or, in a container, deploy a @Handles(\""
              + queue
              + "\") bean");
    }
  }

  /** What a container supplies instead of registered handlers (see {@link PgbusTestKit}). */
  record Container(
      EngineConfig config,
      Transactions transactions,
      JobFunction jobs,
      Set<String> queues,
      JobCipher cipher) {}

  /** Builds a {@link TestWorker}. */
  public static final class Builder {
    private final DataSource dataSource;
    private final Container container;
    private final Handlers handlers = new Handlers();
    private final JoiningDataSource joining;
    private final List<CronJob> crons = new ArrayList<>();
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration jobTimeout;
    private TestClock clock;
    private JobCipher cipher = JobCipher.NONE;

    private Builder(DataSource dataSource, Container container) {
      this.dataSource = dataSource;
      this.container = container;
      this.joining = new JoiningDataSource(dataSource);
    }

    /**
     * The DataSource to build handlers with, before the worker exists: {@link
     * TestWorker#dataSource()}.
     *
     * <pre>{@code
     * var b = TestWorker.builder(dataSource);
     * TestWorker worker = b.handler(new OrderHandler(b.dataSource())).build();
     * }</pre>
     */
    public DataSource dataSource() {
      return container != null ? dataSource : joining;
    }

    /**
     * Registers a handler for the queues of its {@code @Handles}, its payload type read from the
     * {@code JobHandler<T>} it implements, as the runtime registers a bean.
     */
    public Builder handler(JobHandler<?> handler) {
      plainOnly("handler(...)");
      handlers.add(Objects.requireNonNull(handler, "handler"));
      return this;
    }

    /** Registers a handler (a lambda, say) for one queue, with payloads mapped to {@code type}. */
    public <T> Builder handler(String queue, Class<T> type, JobHandler<? super T> handler) {
      return handler(queue, (Type) type, handler);
    }

    /** As {@link #handler(String, Class, JobHandler)}, for a generic payload type. */
    public Builder handler(String queue, Type type, JobHandler<?> handler) {
      plainOnly("handler(...)");
      handlers.add(queue, Objects.requireNonNull(type, "type"), handler);
      return this;
    }

    /** The clock the crons run at (required for {@link TestWorker#runCrons()}). */
    public Builder clock(TestClock v) {
      clock = Objects.requireNonNull(v, "clock");
      return this;
    }

    /**
     * A cron, as {@code pgbus.cron.<name>.schedule}, {@code .queue} and {@code .payload} configure
     * one, evaluated in UTC at the clock's instant.
     *
     * @param payload mapped with JSON-B ({@link RawJson} as its text)
     */
    public Builder cron(String name, String schedule, String queue, Object payload) {
      crons.add(new CronJob(name, schedule, ZoneOffset.UTC, queue, Json.of(queue, payload)));
      return this;
    }

    /** A cron with an empty payload ({@code {}}). */
    public Builder cron(String name, String schedule, String queue) {
      return cron(name, schedule, queue, RawJson.of("{}"));
    }

    /**
     * The retry backoff, as {@code pgbus.retry.base}, {@code .cap} and {@code .jitter} configure it
     * (default 1s, 1h, 0.2): attempt n waits {@code min(cap, base * 2^(n-1))}, scaled by a random
     * factor in {@code [1 - jitter, 1 + jitter]}.
     */
    public Builder retry(Duration base, Duration cap, double jitter) {
      plainOnly("retry(...)");
      retry = new RetryPolicy(base, cap, jitter);
      return this;
    }

    /**
     * The queues that encrypt and their keys, as the deployment's {@code
     * microprofile-config.properties} sets them ({@code pgbus.queue.<name>.encrypt}, {@code
     * pgbus.encryption.*}; docs/configuration.md): their payloads are opened before the handlers
     * run, and their results and errors sealed, as the engine does (default: none encrypts).
     *
     * @throws IllegalArgumentException naming a setting that is wrong, as deployment would
     */
    public Builder encryption(Map<String, String> settings) {
      plainOnly("encryption(...)");
      cipher = Ciphers.of(settings);
      return this;
    }

    /** How long a handler may run before it is interrupted (default 4m30s, pgbus.job-timeout). */
    public Builder jobTimeout(Duration v) {
      plainOnly("jobTimeout(...)");
      jobTimeout = Objects.requireNonNull(v, "jobTimeout");
      return this;
    }

    public TestWorker build() {
      if (container != null) {
        var runner =
            new SyncRunner(
                dataSource,
                container.config(),
                container.transactions(),
                container.jobs(),
                container.cipher());
        return new TestWorker(this, runner, dataSource);
      }
      var config = EngineConfig.builder().workerId("pgbus-test").retry(retry);
      if (jobTimeout != null) {
        config.jobTimeout(jobTimeout);
      }
      JobFunction jobs = (job, tx) -> joining.joining(tx, () -> handlers.invoke(job));
      var runner =
          new SyncRunner(
              dataSource, config.build(), new JdbcTransactions(dataSource), jobs, cipher);
      return new TestWorker(this, runner, joining);
    }

    private void plainOnly(String what) {
      if (container != null) {
        throw new IllegalStateException(
            "pgbus-test: "
                + what
                + " is for plain tests; inside a container the deployment's @Handles beans and"
                + " pgbus.* settings apply");
      }
    }
  }
}

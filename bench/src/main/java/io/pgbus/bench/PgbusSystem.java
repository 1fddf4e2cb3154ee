package io.pgbus.bench;

import io.pgbus.Outcome;
import io.pgbus.engine.CapsuleConfig;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.JobEvents;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.ListenerState;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.Schema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * pgbus on the code path the Liberty layer uses: {@link Engine#enqueue} and {@link
 * Engine#enqueueAll} on a caller's connection, the engine's own Notifier on a dedicated listener
 * connection, capsule claims, and completion by the JobRunner in a {@code JdbcTransactions}
 * transaction. Only the executor (a cached pool instead of the ManagedExecutorService) and the
 * transaction port (JDBC instead of JTA) differ from a container.
 */
final class PgbusSystem implements QueueSystem {

  private static final AtomicInteger WORKERS = new AtomicInteger();

  private final int jobsPerTransaction;
  private final boolean deleteCompleted;
  // Flow control (V14): a global limit of this many running jobs per queue (0: none), and this
  // many concurrency keys dealt round-robin over the enqueued jobs, limit 1 per key (0: no keys).
  private final int globalLimit;
  private final int keys;

  /**
   * pgbus as configured by default: adaptive jobs per transaction ({@code auto}), completed jobs
   * kept a day.
   */
  PgbusSystem() {
    this(CapsuleConfig.AUTO, false);
  }

  /**
   * pgbus with capsules that run up to {@code jobsPerTransaction} jobs in one transaction, and,
   * with {@code deleteCompleted}, {@code pgbus.retention.completed=0}.
   */
  PgbusSystem(int jobsPerTransaction, boolean deleteCompleted) {
    this(jobsPerTransaction, deleteCompleted, 0, 0);
  }

  /**
   * pgbus by default, with a global limit of {@code globalLimit} running jobs on each queue (0:
   * none), and jobs dealt over {@code keys} concurrency keys of limit 1 (0: no keys).
   */
  PgbusSystem(int jobsPerTransaction, boolean deleteCompleted, int globalLimit, int keys) {
    this.jobsPerTransaction = jobsPerTransaction;
    this.deleteCompleted = deleteCompleted;
    this.globalLimit = globalLimit;
    this.keys = keys;
  }

  @Override
  public String name() {
    return "pgbus";
  }

  @Override
  public void install(DataSource dataSource) {
    Schema.migrate(dataSource);
  }

  /**
   * The job operations alone, as an application that only enqueues holds them: no engine, no
   * thread, no datasource; each call uses the connection it is handed.
   */
  private static final Jobs PRODUCER =
      new Jobs(EngineConfig.builder().workerId("bench-producer").build());

  @Override
  public long[] enqueueBatch(Connection c, String queue, int count) {
    var jobs = new ArrayList<NewJob>(count);
    for (int i = 0; i < count; i++) {
      var options = io.pgbus.EnqueueOptions.defaults();
      if (keys > 0) {
        options = options.withConcurrencyKey("k" + (i % keys));
      }
      jobs.add(new NewJob(queue, "{\"n\": " + i + "}", options));
    }
    List<Long> ids = PRODUCER.enqueueAll(c, jobs);
    return ids.stream().mapToLong(Long::longValue).toArray();
  }

  @Override
  public long enqueueOne(Connection c, String queue) {
    return PRODUCER.enqueue(c, NewJob.of(queue, "{\"n\": 0}"));
  }

  @Override
  public Map<Long, Instant> claimedAt(Connection c, long[] ids) throws SQLException {
    var out = new HashMap<Long, Instant>();
    try (PreparedStatement ps =
        c.prepareStatement("SELECT id, attempted_at FROM pgbus.job WHERE id = ANY(?)")) {
      ps.setArray(1, c.createArrayOf("bigint", Arrays.stream(ids).boxed().toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime at = rs.getObject(2, OffsetDateTime.class);
          if (at != null) {
            out.put(rs.getLong(1), at.toInstant());
          }
        }
      }
    }
    return out;
  }

  @Override
  public Consumers start(
      BenchDatabase db, DataSource pool, List<String> queues, int slots, JobTracker tracker) {
    return startCapsules(db, pool, queues.stream().map(List::of).toList(), slots, tracker);
  }

  /** Starts one capsule per element of {@code capsules}, reading its queues, {@code slots} each. */
  Running startCapsules(
      BenchDatabase db,
      DataSource pool,
      List<List<String>> capsules,
      int slots,
      JobTracker tracker) {
    var config = EngineConfig.builder().workerId("bench-" + WORKERS.incrementAndGet());
    if (deleteCompleted) {
      config.completedRetention(Duration.ZERO);
    }
    for (int i = 0; i < capsules.size(); i++) {
      config.capsule(new CapsuleConfig("c" + (i + 1), capsules.get(i), slots, jobsPerTransaction));
      if (globalLimit > 0) {
        for (String queue : capsules.get(i)) {
          config.queueLimit(new io.pgbus.engine.QueueLimit(queue, globalLimit, null));
        }
      }
    }
    var self = new java.util.concurrent.atomic.AtomicReference<Engine>();
    Engine engine =
        Engine.builder(config.build(), pool)
            .listenerConnections(() -> db.connect("pgbus-bench-listener"))
            // The shape of the Liberty layer's wakes port (a CDI event that ends in
            // Engine.wake), with a timestamp taken on the way for W2's latency split.
            .wakes(
                wake -> {
                  tracker.woke();
                  self.get().wake(wake);
                })
            .jobs(
                (ClaimedJob job, Connection tx) -> {
                  tracker.started(job.id());
                  return Outcome.complete(); // a no-op handler
                })
            .events(
                new JobEvents() {
                  @Override
                  public void finished(ClaimedJob job, Outcome.Kind kind, long nanos) {
                    tracker.finished(job.id());
                  }
                })
            .build();
    self.set(engine);
    engine.start();
    return new Running(engine);
  }

  /** A started engine. */
  static final class Running implements Consumers {
    final Engine engine;

    Running(Engine engine) {
      this.engine = engine;
    }

    @Override
    public void awaitReady(Duration timeout) {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (engine.status().listener().state() != ListenerState.DELIVERING) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "pgbus listener not delivering after "
                  + timeout
                  + ": "
                  + engine.status().listener().state());
        }
        Sleep.millis(10);
      }
    }

    @Override
    public Map<String, Long> counters() {
      var out = new LinkedHashMap<String, Long>();
      long claims = 0;
      long empty = 0;
      long claimed = 0;
      EngineStatus now = engine.status();
      for (EngineStatus.CapsuleStatus c : now.capsules()) {
        claims += c.claims();
        empty += c.emptyClaims();
        claimed += c.claimed();
      }
      out.put("claims", claims);
      out.put("empty claims", empty);
      out.put("claimed", claimed);
      out.put("polls", now.ticks());
      out.put("election statements", now.electionStatements());
      out.put("maintenance rounds", now.maintenanceRounds());
      out.put("leader", now.leader() ? 1L : 0L);
      return out;
    }

    @Override
    public void close() {
      engine.stop();
    }
  }
}

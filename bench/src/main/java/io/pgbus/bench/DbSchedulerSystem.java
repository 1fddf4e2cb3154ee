package io.pgbus.bench;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.event.AbstractSchedulerListener;
import com.github.kagkarlsson.scheduler.task.ExecutionComplete;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * db-scheduler (com.github.kagkarlsson:db-scheduler), the JVM peer issue #15 measures pgbus's
 * default throughput against, in its best configuration for a backlog: lock-and-fetch polling (one
 * {@code UPDATE ... FOR UPDATE SKIP LOCKED ... RETURNING} picks a batch), a 100 ms polling interval
 * and 8 executor threads. A one-time task that does nothing; db-scheduler deletes a one-time task's
 * row when it completes.
 *
 * <p>The jobs are put in with a plain {@code INSERT} into its table (one statement per batch, as
 * the other systems do), not through its {@code SchedulerClient}: W1's db-scheduler column is about
 * processing, and its enqueue figures are those of that INSERT.
 */
final class DbSchedulerSystem implements QueueSystem {

  static final String TASK = "noop";

  /** The version the bench pom pins. */
  static final String VERSION = "16.7.1";

  /** db-scheduler's PostgreSQL table, as its README gives it for 16.x. */
  private static final String SCHEMA =
      """
      CREATE TABLE scheduled_tasks (
        task_name            text NOT NULL,
        task_instance        text NOT NULL,
        task_data            bytea,
        execution_time       timestamptz NOT NULL,
        picked               boolean NOT NULL,
        picked_by            text,
        last_success         timestamptz,
        last_failure         timestamptz,
        consecutive_failures int,
        last_heartbeat       timestamptz,
        version              bigint NOT NULL,
        priority             smallint,
        PRIMARY KEY (task_name, task_instance));
      CREATE INDEX execution_time_idx ON scheduled_tasks (execution_time);
      CREATE INDEX last_heartbeat_idx ON scheduled_tasks (last_heartbeat);
      CREATE INDEX priority_execution_time_idx ON scheduled_tasks (priority DESC, execution_time ASC);
      CREATE SEQUENCE bench_task_id;
      """;

  // The instance id is a number from a sequence, so the tracker can name the job by it.
  private static final String ENQUEUE =
      """
      INSERT INTO scheduled_tasks
        (task_name, task_instance, execution_time, picked, version, priority)
      SELECT ?, nextval('bench_task_id')::text, now(), false, 1, 0
        FROM generate_series(1, ?)
      RETURNING task_instance
      """;

  private final double lowerLimit;
  private final double upperLimit;

  /**
   * Lock-and-fetch with db-scheduler's fractions of the thread count: fetch again when fewer than
   * {@code lowerLimit} × threads are queued, up to {@code upperLimit} × threads at a time.
   */
  DbSchedulerSystem(double lowerLimit, double upperLimit) {
    this.lowerLimit = lowerLimit;
    this.upperLimit = upperLimit;
  }

  @Override
  public String name() {
    return "db-scheduler";
  }

  @Override
  public void install(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute(SCHEMA);
    }
  }

  @Override
  public long[] enqueueBatch(Connection c, String queue, int count) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ENQUEUE)) {
      ps.setString(1, TASK);
      ps.setInt(2, count);
      long[] ids = new long[count];
      int i = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids[i++] = Long.parseLong(rs.getString(1));
        }
      }
      return ids;
    }
  }

  @Override
  public long enqueueOne(Connection c, String queue) throws SQLException {
    return enqueueBatch(c, queue, 1)[0];
  }

  @Override
  public Consumers start(
      BenchDatabase db, DataSource pool, List<String> queues, int slots, JobTracker tracker) {
    AtomicLong completed = new AtomicLong();
    OneTimeTask<Void> noop =
        Tasks.oneTime(TASK).execute((inst, ctx) -> tracker.started(Long.parseLong(inst.getId())));
    Scheduler scheduler =
        Scheduler.create(pool, noop)
            .threads(slots)
            .pollingInterval(Duration.ofMillis(100))
            .pollUsingLockAndFetch(lowerLimit, upperLimit)
            .addSchedulerListener(
                // Called once the completion (the DELETE of the row) is done.
                new AbstractSchedulerListener() {
                  @Override
                  public void onExecutionComplete(ExecutionComplete done) {
                    completed.incrementAndGet();
                    tracker.finished(Long.parseLong(done.getExecution().taskInstance.getId()));
                  }
                })
            .build();
    scheduler.start();
    return new Consumers() {
      @Override
      public void awaitReady(Duration timeout) {}

      @Override
      public Map<String, Long> counters() {
        return Map.of("completed", completed.get());
      }

      @Override
      public void close() {
        scheduler.stop();
      }
    };
  }
}

package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Runs jobs on the calling thread, one claim at a time, and cron ticks at an instant the caller
 * chooses: the engine side of {@code pgbus-test}. A job goes the way a capsule sends it: {@code
 * pgbus.claim}, the handler and the settle in one transaction of {@link Transactions}, a failure
 * recorded with the configured {@link RetryPolicy}, the job timeout enforced. There is no loop, no
 * listener and no lease renewal; the caller decides when to run.
 *
 * <p>Time travel: {@link #shiftWaiting} moves the {@code run_at} of every waiting job back, which
 * is what the passing of that time would do to them. The claim and every other statement keep
 * comparing with the database's {@code now()}, so nothing runs on a second clock.
 */
public final class SyncRunner {

  // The waiting jobs (not available ones, which are due already) move back by the time that
  // passed, and each queue that had some hears of its new earliest one: a running capsule in the
  // same database (an Arquillian deployment) wakes for them as it would at their time.
  private static final String SHIFT_WAITING =
      """
      WITH moved AS (
        UPDATE pgbus.job
           SET run_at = run_at - ?::float8 * interval '1 millisecond'
         WHERE state OPERATOR(pg_catalog.=) ANY ('{scheduled,retryable}')
        RETURNING queue, run_at)
      SELECT queue::text, count(*), pgbus.notify(queue, min(run_at)) FROM moved GROUP BY queue
      """;

  // A cron run enqueued at the caller's clock has that clock's instant as run_at; in the
  // database's time it is due that much earlier. run_at = due keeps a second tick from moving it
  // twice.
  private static final String SHIFT_CRON_RUN =
      """
      UPDATE pgbus.job
         SET run_at = run_at - ?::float8 * interval '1 millisecond'
       WHERE queue::text = ?::text AND unique_key::text = ?::text AND run_at = ?
         AND state OPERATOR(pg_catalog.=) ANY ('{scheduled,available}')
      """;

  private final DataSource dataSource;
  private final EngineConfig config;
  private final Transactions transactions;
  private final JobStore store = new JobStore();
  private final JobRunner runner;
  private final Jobs sealing; // prepares the cron runs (sealed, max-wait), as the leader does

  /**
   * @param config supplies the worker id, the lease, the job timeout and the retry policy
   * @param transactions runs each job's handler and settle ({@link JdbcTransactions} in Java SE,
   *     the container's REQUIRES_NEW transactions inside one)
   * @param jobs runs a claimed job's handler
   */
  public SyncRunner(
      DataSource dataSource, EngineConfig config, Transactions transactions, JobFunction jobs) {
    this(dataSource, config, transactions, jobs, JobCipher.NONE);
  }

  /**
   * As {@link #SyncRunner(DataSource, EngineConfig, Transactions, JobFunction)}, opening the
   * payloads (and sealing the results and errors) of the queues {@code cipher} encrypts, as the
   * engine does.
   */
  public SyncRunner(
      DataSource dataSource,
      EngineConfig config,
      Transactions transactions,
      JobFunction jobs,
      JobCipher cipher) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.config = Objects.requireNonNull(config, "config");
    this.transactions = Objects.requireNonNull(transactions, "transactions");
    this.sealing = new Jobs(config, Objects.requireNonNull(cipher, "cipher"));
    this.runner =
        new JobRunner(
            store,
            dataSource,
            transactions,
            Objects.requireNonNull(jobs, "jobs"),
            queue -> false, // a test's handlers run in the job's transaction, whatever their mode
            config::retry,
            JobEvents.NONE,
            SyncRunner::watchdogThread,
            false,
            ErrorDetail.STACK,
            Objects.requireNonNull(cipher, "cipher"));
  }

  /**
   * Claims the next due job of {@code queue} (by priority, then run_at) and runs it to its end on
   * this thread; returns it as claimed (read its row for what it became), or {@code null} when none
   * is due or the queue is paused.
   */
  public synchronized ClaimedJob runNext(String queue) {
    List<ClaimedJob> claimed;
    try (Connection c = dataSource.getConnection()) {
      claimed = store.jobClaim(c, List.of(queue), 1, config.workerId(), config.execution().lease());
    } catch (SQLException e) {
      throw Failures.of(queue, "claim a job of queue '" + queue + "'", e);
    }
    if (claimed.isEmpty()) {
      return null;
    }
    ClaimedJob job = claimed.get(0);
    runner.run(job, config.jobTimeout(job.queue()));
    return job;
  }

  /**
   * Moves the run_at of every scheduled and retryable job back by {@code elapsed}, as if that much
   * time had passed; returns how many moved per queue.
   */
  public static Map<String, Long> shiftWaiting(Connection c, Duration elapsed) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SHIFT_WAITING)) {
      ps.setLong(1, elapsed.toMillis());
      var perQueue = new LinkedHashMap<String, Long>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          perQueue.put(rs.getString(1), rs.getLong(2));
        }
      }
      return perQueue;
    }
  }

  /**
   * Enqueues the runs of {@code crons} that are due at {@code clock}, exactly as the maintenance
   * leader does at the database's clock (one run per cron and tick, the latest due; a cron seen for
   * the first time starts at {@code clock}; other schedules in pgbus.schedule are ticked too). Each
   * run's job is then moved back by {@code ahead}, how far {@code clock} is ahead of the database's
   * clock, so that it is due now. Returns the runs enqueued.
   */
  public int tickCrons(List<CronJob> crons, Instant clock, Duration ahead) {
    if (crons.isEmpty()) {
      return 0;
    }
    var enqueuer =
        new ScheduleEnqueuer(
            crons, store, transactions, ScheduleEnqueuer.MAX_WAIT, sealing::scheduleRun);
    try (Connection c = dataSource.getConnection()) {
      int n = enqueuer.tick(c, clock).enqueued();
      if (!ahead.isZero()) {
        for (CronJob cron : crons) {
          Instant due = cron.parsedSchedule().latestAtOrBefore(clock);
          if (due != null) {
            shiftCronRun(c, cron, due, ahead);
          }
        }
      }
      return n;
    } catch (SQLException e) {
      throw Failures.of(null, "tick the crons at " + clock, e);
    } catch (Exception e) {
      throw new PgbusException("pgbus could not tick the crons at " + clock + ": " + e, e);
    }
  }

  private static void shiftCronRun(Connection c, CronJob cron, Instant due, Duration ahead)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SHIFT_CRON_RUN)) {
      ps.setLong(1, ahead.toMillis());
      ps.setString(2, cron.queue());
      ps.setString(3, ScheduleEnqueuer.runKey(cron.name(), due));
      ps.setObject(4, OffsetDateTime.ofInstant(due, ZoneOffset.UTC));
      ps.executeUpdate();
    }
  }

  /** The job-timeout watchdog's loop: a daemon thread, so a test JVM never waits for it. */
  private static void watchdogThread(Runnable loop) {
    Thread t = new Thread(loop, "pgbus-sync-watchdog");
    t.setDaemon(true);
    t.start();
  }
}

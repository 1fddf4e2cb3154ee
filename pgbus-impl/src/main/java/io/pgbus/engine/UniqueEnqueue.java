package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.FinishedState;
import io.pgbus.InvalidJobException;
import io.pgbus.ReplaceField;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * An enqueue whose unique key holds more than "one waiting or running job": a period and states
 * ({@link EnqueueOptions#forPeriod}, {@link EnqueueOptions#amongStates}), replace or debounce
 * ({@link EnqueueOptions#replacing}, {@link EnqueueOptions#debounce}). One statement, {@code
 * pgbus.enqueue_unique} (R__unique.sql), which checks the rule again for SQL callers and takes the
 * key's claim before it reads the holder, so concurrent enqueues queue on a row instead of racing.
 * Apart from {@link JobStore}'s enqueue so that a plain enqueue stays its one statement.
 */
final class UniqueEnqueue {

  // ENQUEUE's sub-select of who enqueues (JobStore), then pgbus.enqueue_unique. Durations go as
  // microseconds, the resolution of an interval, in float8: float8 * interval is pg_catalog's exact
  // operator (bigint * interval would be resolved through the caller's search_path).
  private static final String SQL =
      """
      SELECT e.id, e.outcome, e.due
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p,
                     pg_catalog.set_config('pgbus.run_as', coalesce(?::text, ''), true) AS r,
                     pg_catalog.set_config('pgbus.correlation_id',
                       coalesce(?::text, ?::bigint::text, ''),
                       true) AS c
              OFFSET 0) s,
             LATERAL pgbus.enqueue_unique(s.queue, ?::jsonb, ?::text,
               ?::float8 * interval '1 microsecond', ?::text[], ?::text[],
               ?::float8 * interval '1 microsecond', ?::float8 * interval '1 microsecond',
               coalesce(?, now() + ?::float8 * interval '1 millisecond'), ?, ?, ?, ?, ?) e
      """;

  private static final String IN_HANDLER = JobStore.inHandler(SQL);
  private static final String CLIENT_WAKE = JobStore.clientWake(SQL);
  private static final String IN_HANDLER_CLIENT_WAKE = JobStore.clientWake(IN_HANDLER);

  private UniqueEnqueue() {}

  /**
   * Refuses what the options cannot say together, naming it and the fix: debounce with a run time
   * of its own; a rule on a job that waits on others (it has no run time or holder to compare yet).
   */
  static void check(NewJob job) {
    EnqueueOptions o = job.options();
    if (!o.hasUniqueRule()) {
      return;
    }
    if (o.debounceWindow() != null && (o.runAt() != null || o.delay() != null)) {
      throw new InvalidJobException(
          job.queue(),
          "debounce sets the run time itself (queue '"
              + job.queue()
              + "'): drop withRunAt/withDelay ("
              + o
              + "), or enqueue without debounce");
    }
    if (!o.afterJobs().isEmpty()) {
      throw new InvalidJobException(
          job.queue(),
          "a job that waits on other jobs (queue '"
              + job.queue()
              + "') does not take forPeriod, replacing or debounce: enqueue it with a plain"
              + " unique key");
    }
  }

  /** Refuses a rule in a bulk enqueue ({@code what}), which enqueues plain unique keys only. */
  static void refuseInBulk(List<NewJob> jobs, String what) {
    for (NewJob job : jobs) {
      if (job.options().hasUniqueRule()) {
        throw new InvalidJobException(
            job.queue(),
            what
                + " does not take forPeriod, replacing or debounce (queue '"
                + job.queue()
                + "', key '"
                + job.options().uniqueKey()
                + "'): enqueue such a job on its own, with enqueue");
      }
    }
  }

  /** The enqueue, and when the job it names is due (null: unknown, for a finished holder). */
  record Done(Enqueued enqueued, Instant due) {}

  static Done run(Connection c, NewJob job, TraceContext trace, boolean clientWake)
      throws SQLException {
    EnqueueOptions o = job.options();
    boolean inHandler = job.parentJobId() != null;
    String sql =
        clientWake
            ? (inHandler ? IN_HANDLER_CLIENT_WAKE : CLIENT_WAKE)
            : (inHandler ? IN_HANDLER : SQL);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      int i = 1;
      ps.setString(i++, job.queue());
      ps.setString(i++, job.enqueuedBy());
      ps.setString(i++, job.runAs());
      ps.setString(i++, o.correlationId());
      ps.setObject(i++, job.parentJobId(), Types.BIGINT);
      ps.setString(i++, job.payloadJson());
      ps.setString(i++, o.uniqueKey());
      ps.setObject(i++, micros(o.uniquePeriod()), Types.DOUBLE);
      ps.setArray(
          i++,
          o.uniquePeriod() == null || o.uniqueStates().isEmpty()
              ? null
              : c.createArrayOf(
                  "text", o.uniqueStates().stream().map(FinishedState::sqlName).toArray()));
      ps.setArray(
          i++,
          o.replacing().isEmpty()
              ? null
              : c.createArrayOf(
                  "text", o.replacing().stream().map(ReplaceField::sqlName).toArray()));
      ps.setObject(i++, micros(o.debounceWindow()), Types.DOUBLE);
      ps.setObject(i++, micros(o.debounceMaxWait()), Types.DOUBLE);
      ps.setTimestamp(i++, o.runAt() == null ? null : Timestamp.from(o.runAt()));
      // Neither runAt nor delay: NULL, so that pgbus.enqueue_unique tells "now" from a run time.
      ps.setObject(i++, o.delay() == null ? null : o.delay().toMillis(), Types.BIGINT);
      ps.setInt(i++, o.priority());
      ps.setInt(i++, o.maxAttempts());
      ps.setString(i++, trace == null ? null : trace.traceParent());
      ps.setString(i++, trace == null ? null : trace.traceState());
      ps.setString(i, o.concurrencyKey());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        Enqueued.Result result = Enqueued.Result.valueOf(rs.getString(2).toUpperCase(Locale.ROOT));
        Timestamp due = rs.getTimestamp(3);
        return new Done(
            new Enqueued(rs.getLong(1), result != Enqueued.Result.INSERTED, result),
            due == null ? null : due.toInstant());
      }
    }
  }

  // The claims past their period, oldest first, at most a batch per round (the prune task's). SKIP
  // LOCKED: a claim an enqueue has locked to take it over is that enqueue's to renew.
  private static final String EXPIRE =
      """
      DELETE FROM pgbus.unique_claim u
       WHERE (u.queue, u.unique_key) IN (
               SELECT x.queue, x.unique_key FROM pgbus.unique_claim x
                WHERE x.until <= now() ORDER BY x.until LIMIT ? FOR UPDATE SKIP LOCKED)
         AND u.until <= now()
      """;

  /** Deletes at most {@code batch} expired claims; how many. */
  static int expireClaims(Connection c, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EXPIRE)) {
      ps.setInt(1, batch);
      return ps.executeUpdate();
    }
  }

  private static Double micros(Duration d) {
    return d == null ? null : d.toNanos() / 1000.0;
  }
}

package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.InvalidJobException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

/**
 * A job's start-by deadline at enqueue ({@link EnqueueOptions#startBy}, or its queue's {@code
 * pgbus.queue.<name>.max-wait}): checked before any statement, with the value and the fix, and
 * written after the insert ({@code pgbus.set_start_by}, which checks it again, for SQL callers).
 * The claim refuses a job past it and the leader cancels it ({@link JobStore#jobExpire}).
 */
final class StartBy {

  private StartBy() {}

  /**
   * The job with its queue's max-wait as its deadline, counted from when it is due, unless it has
   * one of its own or the queue none. A job that waits on others is due when they are done: the
   * wait is counted from the enqueue then.
   */
  static NewJob withQueueMaxWait(NewJob job, Function<String, Duration> maxWait, Instant now) {
    if (job.options().startBy() != null) {
      return job;
    }
    Duration wait = maxWait.apply(job.queue());
    return wait == null
        ? job
        : job.withOptions(job.options().startBy(due(job.options(), now).plus(wait)));
  }

  /**
   * Refuses a deadline that is not after {@code now}, or not after the job's run_at or delay (it
   * could never start), naming it and the fix.
   */
  static void check(NewJob job, Instant now) {
    Instant startBy = job.options().startBy();
    if (startBy == null) {
      return;
    }
    if (!startBy.isAfter(now)) {
      throw refused(
          job,
          "is not after now ("
              + now
              + "): give a deadline in the future, or enqueue without"
              + " startBy");
    }
    Instant due = due(job.options(), now);
    if (job.options().afterJobs().isEmpty() && !startBy.isAfter(due)) {
      throw refused(
          job,
          "is not after the job's due time "
              + due
              + ": it could never start; give a later deadline or an earlier runAt/delay");
    }
  }

  private static InvalidJobException refused(NewJob job, String problem) {
    return new InvalidJobException(
        job.queue(),
        "startBy " + job.options().startBy() + " for queue '" + job.queue() + "' " + problem);
  }

  /** Refuses a deadline in a bulk enqueue ({@code what}), which does not write one. */
  static void refuseInBulk(List<NewJob> jobs, String what) {
    for (NewJob job : jobs) {
      if (job.options().startBy() != null) {
        throw new InvalidJobException(
            job.queue(),
            what
                + " does not take startBy ("
                + job.options().startBy()
                + ", queue '"
                + job.queue()
                + "'): enqueue a job with a deadline on its own, with enqueue");
      }
    }
  }

  /** Writes the deadline of a job just inserted (not of a duplicate, whose own stays). */
  static void write(Connection c, JobStore store, NewJob job, Enqueued e) throws SQLException {
    if (job.options().startBy() != null && e.inserted()) {
      store.jobSetStartBy(c, e.id(), job.options().startBy());
    }
  }

  private static Instant due(EnqueueOptions o, Instant now) {
    if (o.runAt() != null) {
      return o.runAt();
    }
    return o.delay() == null ? now : now.plus(o.delay());
  }
}

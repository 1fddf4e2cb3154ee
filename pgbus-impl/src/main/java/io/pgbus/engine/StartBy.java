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
   * The job with its queue's max-wait as its deadline, counted from when it is due (its run_at or
   * delay, a debounce's first window, else now; never before now), unless it has one of its own or
   * the queue none. A job that waits on others is due when they are done: the wait is counted from
   * the enqueue then.
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

  /** {@link #withQueueMaxWait} of each job, in order. */
  static List<NewJob> withQueueMaxWait(
      List<NewJob> jobs, Function<String, Duration> maxWait, Instant now) {
    return jobs.stream().map(j -> withQueueMaxWait(j, maxWait, now)).toList();
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

  /**
   * Refuses a deadline on a batch's callback: it is enqueued later, by the transaction that
   * finishes the last member, which has no deadline to give it.
   */
  static void refuseOnCallback(NewJob callback) {
    if (callback.options().startBy() != null) {
      throw new InvalidJobException(
          callback.queue(),
          "a batch's callback does not take startBy ("
              + callback.options().startBy()
              + ", queue '"
              + callback.queue()
              + "'): it is enqueued when the batch is done; give the members deadlines, or let"
              + " the callback check its own time");
    }
  }

  /**
   * Whether a bulk enqueue holds a job with a unique key and a deadline: its id may be a holder's,
   * whose own deadline stays, so such an enqueue inserts one by one to know ({@link #write}).
   */
  static boolean keyedWithDeadline(List<NewJob> jobs) {
    return jobs.stream()
        .anyMatch(j -> j.options().uniqueKey() != null && j.options().startBy() != null);
  }

  /**
   * Writes the deadlines of the jobs a bulk enqueue just inserted ({@code ids}, in the order of
   * {@code jobs}; none with a unique key and a deadline: {@link #keyedWithDeadline}), in one
   * statement. Checked before ({@link #check}), as every job's.
   */
  static void writeAll(Connection c, JobStore store, List<NewJob> jobs, List<Long> ids)
      throws SQLException {
    var write = new java.util.LinkedHashMap<Long, Instant>();
    for (int i = 0; i < jobs.size(); i++) {
      Instant startBy = jobs.get(i).options().startBy();
      if (startBy != null) {
        write.put(ids.get(i), startBy);
      }
    }
    if (!write.isEmpty()) {
      store.jobSetStartByMany(c, write);
    }
  }

  /** Writes the deadline of a job just inserted (not of a duplicate, whose own stays). */
  static void write(Connection c, JobStore store, NewJob job, Enqueued e) throws SQLException {
    if (job.options().startBy() != null && e.inserted()) {
      store.jobSetStartBy(c, e.id(), job.options().startBy());
    }
  }

  /** When a job with these options is due: its run_at, delay or debounce window; not before now. */
  private static Instant due(EnqueueOptions o, Instant now) {
    Instant due;
    if (o.runAt() != null) {
      due = o.runAt();
    } else if (o.delay() != null) {
      due = now.plus(o.delay());
    } else if (o.debounceWindow() != null) {
      due = now.plus(o.debounceWindow()); // the first enqueue's run_at (pgbus.enqueue_unique)
    } else {
      due = now;
    }
    return due.isBefore(now) ? now : due;
  }
}

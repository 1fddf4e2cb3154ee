package io.pgbus.engine;

import io.pgbus.Enqueued;
import io.pgbus.OverlapPolicy;
import io.pgbus.ScheduleDefinition;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * One run of a schedule under its {@link OverlapPolicy}, in the leader's tick transaction (after
 * the advance that fenced the schedule's row). The previous run is the job the row names ({@code
 * last_job_id}) and its state in {@code pgbus.job} now: nothing is remembered in memory, so a new
 * leader, on any JVM, decides the same as the old one would have.
 */
final class RunOverlap {

  /** What became of a run: the job the next run must wait out, and the outcome recorded. */
  record Dealt(Long jobId, String outcome, boolean enqueued) {}

  static final String ENQUEUED = "enqueued";
  static final String SKIPPED = "skipped";
  static final String QUEUED = "queued";
  static final String CANCELLED_PREVIOUS = "cancelled_previous";

  private final JobStore jobs;
  private final LinkStore links = new LinkStore();
  private final ScheduleStore schedules = new ScheduleStore();
  private final UnaryOperator<NewJob> seal;

  RunOverlap(JobStore jobs, UnaryOperator<NewJob> seal) {
    this.jobs = Objects.requireNonNull(jobs);
    this.seal = Objects.requireNonNull(seal);
  }

  /**
   * Deals with the run {@code run} of {@code d}, whose previous run's job is {@code previous}
   * (null: none known). Under {@link OverlapPolicy#ALLOW} the previous run is not even read.
   */
  Dealt deal(Connection c, ScheduleDefinition d, Instant run, Long previous) throws SQLException {
    OverlapPolicy policy = d.overlap();
    String state =
        policy == OverlapPolicy.ALLOW || previous == null
            ? null
            : jobs.jobWaitingOrRunning(c, previous);
    if (state == null) {
      return new Dealt(insert(c, ScheduleBook.runJob(d, run, null)), ENQUEUED, true);
    }
    switch (policy) {
      case SKIP:
        schedules.scheduleAuditSkip(c, d.name(), d.queue(), run, previous, state);
        return new Dealt(previous, SKIPPED, false);
      case QUEUE:
        // A dependency, as any job's: released when the previous run completes (by whichever JVM
        // finishes it), cancelled with it when it dies or is cancelled.
        NewJob after = seal.apply(ScheduleBook.runJobAfter(d, run, previous));
        Enqueued queued = links.enqueueAfter(c, after, null, false);
        StartBy.write(c, jobs, after, queued);
        return new Dealt(queued.id(), QUEUED, true);
      case CANCEL_PREVIOUS:
        // The operator's cancel: a waiting job at once; a running one gets the request its JVM
        // hears at this commit (NOTIFY pgbus-cancel), so its handler is asked to stop.
        jobs.jobCancel(c, previous, "schedule:" + d.name());
        return new Dealt(insert(c, ScheduleBook.runJob(d, run, null)), CANCELLED_PREVIOUS, true);
      case ALLOW:
      default:
        throw new IllegalStateException("overlap " + policy + " reads no previous run");
    }
  }

  /** Inserts a run, with its deadline when its queue has a max-wait. */
  private long insert(Connection c, NewJob run) throws SQLException {
    NewJob job = seal.apply(run);
    Enqueued e = jobs.jobInsertIfAbsent(c, job);
    StartBy.write(c, jobs, job, e);
    return e.id();
  }
}

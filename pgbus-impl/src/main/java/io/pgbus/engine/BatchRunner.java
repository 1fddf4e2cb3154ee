package io.pgbus.engine;

import io.pgbus.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Runs several claimed jobs in one transaction ({@link CapsuleConfig#jobsPerTransaction()}): their
 * handlers one after another, then one fenced statement completes every job whose handler returned
 * complete. Each job's business writes still commit exactly with its completion, because all of
 * them commit together; what the batch saves is a transaction and a statement per job.
 *
 * <p>When anything fails, the whole transaction rolls back. The job whose handler threw has its
 * failure recorded, as in a single-job run; every other job gets a fresh lease and runs again in a
 * transaction of its own, so a bad job costs its neighbours a second run, never an attempt. The
 * handlers share one job timeout, counted from the start of the transaction, because the jobs'
 * leases all started with the same claim.
 */
final class BatchRunner {

  private static final System.Logger LOG = System.getLogger(BatchRunner.class.getName());

  /** SQLSTATE 25P02: an earlier statement failed and the transaction only accepts a rollback. */
  private static final String IN_FAILED_TRANSACTION = "25P02";

  private final JobRunner single;
  private final JobStore store;
  private final DataSource dataSource;
  private final Transactions transactions;
  private final JobEvents events;
  private final Duration lease;

  BatchRunner(
      JobRunner single,
      JobStore store,
      DataSource dataSource,
      Transactions transactions,
      JobEvents events,
      Duration lease) {
    this.single = Objects.requireNonNull(single);
    this.store = Objects.requireNonNull(store);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.transactions = Objects.requireNonNull(transactions);
    this.events = Objects.requireNonNull(events);
    this.lease = Objects.requireNonNull(lease);
  }

  /** Runs the jobs; returns the earliest time one of them is due again, or null. Never throws. */
  Instant run(List<ClaimedJob> jobs, Duration timeout) {
    if (jobs.size() == 1) {
      return single.run(jobs.get(0), timeout);
    }
    var batch = new Batch(jobs, timeout);
    JobRunner.Settled[] settled;
    try {
      settled = transactions.inNewTransaction(batch::run);
    } catch (Throwable t) {
      return recover(batch, t, timeout);
    }
    Instant due = null;
    for (int i = 0; i < jobs.size(); i++) {
      events.finished(jobs.get(i), settled[i].kind(), batch.nanos[i]);
      due = Capsule.earliest(due, settled[i].dueAgain());
    }
    return due;
  }

  /** Hands back a job that was claimed but never started. */
  void release(ClaimedJob job) {
    single.release(job);
  }

  /** After a rollback: blame the handler that threw, run every other job again on its own. */
  private Instant recover(Batch batch, Throwable failure, Duration timeout) {
    Throwable cause = JobRunner.rootCause(failure);
    int blamed = blamed(batch, failure);
    Instant due = null;
    List<ClaimedJob> again = new ArrayList<>();
    for (int i = 0; i < batch.jobs.size(); i++) {
      ClaimedJob job = batch.jobs.get(i);
      if (i != blamed) {
        again.add(job);
        continue;
      }
      JobRunner.Settled s = single.recordStopped(job, cause);
      events.finished(job, s == null ? null : s.kind(), batch.nanos[i]);
      due = s == null ? null : s.dueAgain();
    }
    LOG.log(
        System.Logger.Level.DEBUG,
        "pgbus: a transaction of {0} jobs rolled back ({1}); running {2} of them one by one",
        batch.jobs.size(),
        cause.toString(),
        again.size());
    for (ClaimedJob job : again) {
      // Each lease is renewed right before its job runs again, not all at once up front: the
      // reruns before it take their time, and a job must never run past its lease.
      extendLease(job);
      due = Capsule.earliest(due, single.run(job, timeout, !batch.announced(job)));
    }
    return due;
  }

  /**
   * The job whose handler was running when the transaction failed, or -1. A handler that only met
   * the aborted transaction an earlier handler left behind is not to blame: it runs again.
   */
  private static int blamed(Batch batch, Throwable failure) {
    if (batch.current < 0) {
      return -1;
    }
    // pgjdbc chains the statement that aborted the transaction as the cause of 25P02, so look
    // along the chain rather than at its root.
    for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof SQLException e && IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
        return -1;
      }
    }
    return batch.current;
  }

  /** The lease started with the claim, and some of that time is gone: renew it first. */
  private void extendLease(ClaimedJob job) {
    try (Connection c = dataSource.getConnection()) {
      store.jobExtendLeases(c, List.of(job), lease);
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not renew the lease of job {0} before running it again: {1}",
          job.id(),
          e.getMessage());
    }
  }

  /** One try at running the jobs together, and what the recovery needs to know about it. */
  private final class Batch {
    final List<ClaimedJob> jobs;
    final Duration timeout;
    final long[] nanos;
    int started; // how many handlers were announced
    int current = -1; // the handler running now, or -1 outside handlers

    Batch(List<ClaimedJob> jobs, Duration timeout) {
      this.jobs = jobs;
      this.timeout = timeout;
      this.nanos = new long[jobs.size()];
    }

    boolean announced(ClaimedJob job) {
      return jobs.indexOf(job) < started;
    }

    JobRunner.Settled[] run(Connection c) throws Exception {
      long deadline = System.nanoTime() + timeout.toNanos();
      Outcome[] outcomes = new Outcome[jobs.size()];
      for (int i = 0; i < jobs.size(); i++) {
        ClaimedJob job = jobs.get(i);
        current = i;
        events.started(job);
        started = i + 1;
        long start = System.nanoTime();
        Duration left = Duration.ofNanos(Math.max(1, deadline - start));
        try {
          outcomes[i] = single.handle(c, job, left);
        } finally {
          nanos[i] = System.nanoTime() - start;
        }
      }
      current = -1;
      var settled = new JobRunner.Settled[jobs.size()];
      List<ClaimedJob> completed = new ArrayList<>();
      for (int i = 0; i < jobs.size(); i++) {
        Outcome o = outcomes[i] == null ? Outcome.complete() : outcomes[i];
        // A job with a result completes on its own statement (JobRunner.settle); the rest share
        // one.
        if (o.kind() == Outcome.Kind.COMPLETE && !o.hasResult()) {
          completed.add(jobs.get(i));
          settled[i] = new JobRunner.Settled(Outcome.Kind.COMPLETE, null);
        } else {
          settled[i] = single.settle(c, jobs.get(i), o);
        }
      }
      boolean delete = single.deletesCompleted();
      if (!completed.isEmpty() && store.jobCompleteMany(c, completed, delete) != completed.size()) {
        // Some lease was lost, and which one does not matter: each job runs again on its own,
        // where the fence sorts it out.
        throw new IllegalStateException(
            "pgbus: a job of this transaction is no longer held by this worker");
      }
      return settled;
    }
  }
}

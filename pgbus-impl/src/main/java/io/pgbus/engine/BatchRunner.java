package io.pgbus.engine;

import io.pgbus.Outcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Runs a slot's claimed jobs, in claim order, several to a transaction where the capsule's {@link
 * Grouping} lets them share one: their handlers one after another, then one fenced statement
 * completes every job whose handler returned complete. Each job's business writes still commit
 * exactly with its completion, because all of them commit together; what a group saves is a
 * transaction and a statement per job.
 *
 * <p>When anything fails, the group's transaction rolls back. The job whose handler threw has its
 * failure recorded in a transaction of its own, as in a single-job run (its attempt is spent once);
 * every other job that had started gets a fresh lease and runs again in a transaction of its own,
 * without spending an attempt, and the jobs that had not started yet go on as the next group. So a
 * bad job costs a neighbour at most a second run, never an attempt.
 *
 * <p>Each handler has its own job timeout, counted from its own start, as a job run alone has. The
 * jobs' leases all started with the claim, so before a handler whose timeout would outlast its
 * lease, the leases of it and the jobs after it are renewed (in a transaction of their own).
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

  /**
   * Runs a slot's jobs; returns the earliest time one of them is due again, or null. Never throws.
   *
   * @param timeouts each job's timeout, by its queue
   * @param leasedAt {@link System#nanoTime()} just before the claim that set the jobs' leases
   * @param starting called as each handler starts (the capsule counts a slot's stall from it)
   */
  Instant run(
      List<ClaimedJob> jobs,
      Grouping grouping,
      Function<String, Duration> timeouts,
      long leasedAt,
      Runnable starting) {
    var slot = new Slot(jobs, timeouts, leasedAt, starting);
    Instant due = null;
    int from = 0;
    while (from < jobs.size()) {
      int to = grouping.groupEnd(jobs, from);
      if (to - from == 1) {
        slot.coverLease(from);
        starting.run();
        due =
            ClaimReasons.earliest(
                due,
                single.run(
                    jobs.get(from), slot.timeout(from), true, n -> grouping.ran(1, n, false)));
        from++;
      } else {
        var group = new Group(slot, from, to, grouping.budgetNanos());
        due = ClaimReasons.earliest(due, runGroup(group, grouping));
        from = group.next();
      }
    }
    return due;
  }

  /** Runs one group in one transaction; after a rollback, recovers as the class doc says. */
  private Instant runGroup(Group group, Grouping grouping) {
    JobRunner.Settled[] settled;
    try {
      settled = transactions.inNewTransaction(group::run);
    } catch (Throwable t) {
      grouping.ran(group.started, group.handlerNanos(), true);
      return recover(group, t);
    }
    // The handlers' time alone sizes the groups: a slow commit (a busy disk) is a reason to group,
    // not a reason to stop.
    grouping.ran(group.started, group.handlerNanos(), false);
    Instant due = null;
    for (int i = 0; i < group.started; i++) {
      events.finished(group.job(i), settled[i].kind(), group.nanos[i]);
      due = ClaimReasons.earliest(due, settled[i].dueAgain());
    }
    return due;
  }

  /** Whether the job's handler opens its own transactions: it never shares one. */
  boolean ownsTransactions(ClaimedJob job) {
    return single.ownsTransactions(job);
  }

  /** Hands back a job that was claimed but never started. */
  void release(ClaimedJob job) {
    single.release(job);
  }

  /**
   * After a rollback: blame the handler that threw, run every other job that had started again on
   * its own. The jobs that had not started are left to the next group.
   */
  private Instant recover(Group group, Throwable failure) {
    Throwable cause = JobRunner.rootCause(failure);
    if (cause instanceof JobRunner.JobReleasedException) {
      // A stopping engine released the group's jobs: none of them may run again here.
      LOG.log(System.Logger.Level.INFO, cause.getMessage() + " (with the rest of its group)");
      return null;
    }
    int blamed = blamed(group, failure);
    Instant due = null;
    if (group.started == 0) {
      // No handler ran: the transaction could not begin (the database is away?). Each job runs on
      // its own, where a failure to begin is recorded as that job's failure, as for a lone job.
      for (int i = 0; i < group.to - group.from; i++) {
        group.slot.coverLease(group.from + i);
        group.slot.starting.run();
        due =
            ClaimReasons.earliest(
                due, single.run(group.job(i), group.slot.timeout(group.from + i)));
      }
      return due;
    }
    List<ClaimedJob> again = new ArrayList<>();
    for (int i = 0; i < group.started; i++) {
      ClaimedJob job = group.job(i);
      if (i != blamed) {
        again.add(job);
        continue;
      }
      JobRunner.Settled s = single.recordStopped(job, cause);
      events.finished(job, s == null ? null : s.kind(), group.nanos[i]);
      due = s == null ? null : s.dueAgain();
    }
    LOG.log(
        System.Logger.Level.DEBUG,
        "pgbus: a transaction of {0} jobs rolled back ({1}); running {2} of them one by one",
        group.started,
        cause.toString(),
        again.size());
    for (ClaimedJob job : again) {
      // Each lease is renewed right before its job runs again, not all at once up front: the
      // reruns before it take their time, and a job must never run past its lease.
      extendLease(job);
      group.slot.starting.run();
      due =
          ClaimReasons.earliest(
              due, single.run(job, group.slot.timeouts.apply(job.queue()), false));
    }
    return due;
  }

  /**
   * The job whose handler was running when the transaction failed, or -1. A handler that only met
   * the aborted transaction an earlier handler left behind is not to blame: it runs again.
   */
  private static int blamed(Group group, Throwable failure) {
    if (group.current < 0) {
      return -1;
    }
    // pgjdbc chains the statement that aborted the transaction as the cause of 25P02, so look
    // along the chain rather than at its root.
    for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
      if (t instanceof SQLException e && IN_FAILED_TRANSACTION.equals(e.getSQLState())) {
        return -1;
      }
    }
    return group.current;
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

  /** A slot's jobs, their timeouts, and when their leases were last set. */
  private final class Slot {
    final List<ClaimedJob> jobs;
    final Function<String, Duration> timeouts;
    final Runnable starting;
    long leasedAt;

    Slot(
        List<ClaimedJob> jobs,
        Function<String, Duration> timeouts,
        long leasedAt,
        Runnable starting) {
      this.jobs = jobs;
      this.timeouts = timeouts;
      this.leasedAt = leasedAt;
      this.starting = starting;
    }

    Duration timeout(int i) {
      return timeouts.apply(jobs.get(i).queue());
    }

    /**
     * Before job {@code i}'s handler starts: when its timeout would outlast the lease set at the
     * claim (or at the last renewal), renews the leases of it and of the jobs after it. A job
     * started at once, as a lone job is, never needs it: the timeout is shorter than the lease.
     */
    void coverLease(int i) {
      long now = System.nanoTime();
      if (now + timeout(i).toNanos() - (leasedAt + lease.toNanos()) <= 0) {
        return;
      }
      List<ClaimedJob> rest = jobs.subList(i, jobs.size());
      try {
        transactions.inNewTransaction(c -> store.jobExtendLeases(c, rest, lease));
        leasedAt = now;
      } catch (Exception e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus could not renew the leases of {0} jobs before running them: {1}",
            rest.size(),
            e.getMessage());
      }
    }
  }

  /** One try at running a slot's jobs {@code from} to {@code to} together. */
  private final class Group {
    final Slot slot;
    final int from;
    final int to;
    final long budgetNanos;
    final long[] nanos;
    int started; // how many handlers were announced
    int current = -1; // the handler running now (relative to from), or -1 outside handlers

    Group(Slot slot, int from, int to, long budgetNanos) {
      this.slot = slot;
      this.from = from;
      this.to = to;
      this.budgetNanos = budgetNanos;
      this.nanos = new long[to - from];
    }

    ClaimedJob job(int i) {
      return slot.jobs.get(from + i);
    }

    long handlerNanos() {
      long sum = 0;
      for (int i = 0; i < started; i++) {
        sum += nanos[i];
      }
      return sum;
    }

    /**
     * Where the slot goes on after this try: the first job that did not start; past them all when
     * none started (the transaction itself failed to begin, and {@link #recover} ran them alone).
     */
    int next() {
      return started == 0 ? to : from + started;
    }

    JobRunner.Settled[] run(Connection c) throws Exception {
      long begun = System.nanoTime();
      Outcome[] outcomes = new Outcome[to - from];
      for (int i = 0; i < to - from; i++) {
        if (i > 0 && System.nanoTime() - begun > budgetNanos) {
          break; // over its time: commit what ran, the rest go on in the next transaction
        }
        ClaimedJob job = job(i);
        slot.coverLease(from + i);
        current = i;
        events.started(job);
        started = i + 1;
        slot.starting.run();
        long start = System.nanoTime();
        try {
          outcomes[i] = single.handle(c, job, slot.timeout(from + i));
        } finally {
          nanos[i] = System.nanoTime() - start;
        }
      }
      current = -1;
      var settled = new JobRunner.Settled[started];
      List<ClaimedJob> completed = new ArrayList<>();
      for (int i = 0; i < started; i++) {
        Outcome o = outcomes[i] == null ? Outcome.complete() : outcomes[i];
        // A job with a result completes on its own statement (JobRunner.settle); the rest share
        // one.
        if (o.kind() == Outcome.Kind.COMPLETE && !o.hasResult()) {
          completed.add(job(i));
          settled[i] = new JobRunner.Settled(Outcome.Kind.COMPLETE, null);
        } else {
          settled[i] = single.settle(c, job(i), o);
        }
      }
      boolean delete = single.deletesCompleted();
      if (completed.size() == 1) {
        if (!store.jobComplete(c, completed.get(0), delete)) {
          throw new IllegalStateException(
              "pgbus: a job of this transaction is no longer held by this worker");
        }
      } else if (!completed.isEmpty()
          && store.jobCompleteMany(c, completed, delete) != completed.size()) {
        // Some lease was lost, and which one does not matter: each job runs again on its own,
        // where the fence sorts it out.
        throw new IllegalStateException(
            "pgbus: a job of this transaction is no longer held by this worker");
      }
      return settled;
    }
  }
}

package io.pgbus.engine;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * How many claimed jobs share one transaction in a capsule: the one place that decides it ({@link
 * CapsuleConfig#jobsPerTransaction()}).
 *
 * <p>With a fixed {@code jobs-per-transaction=N} every claim asks for N jobs per free slot, and 1
 * never groups. Under {@code auto} (the default) the size follows the backlog:
 *
 * <ul>
 *   <li>A claim asks for one job per free slot until a claim comes back full, the sign of a
 *       backlog. A lone job is therefore claimed alone and starts at once: nothing ever waits to
 *       fill a group.
 *   <li>Each full claim doubles the jobs a slot takes, up to {@link #AUTO_MAX}; a claim that comes
 *       back short (the backlog is worked off) returns to one.
 *   <li>The size is also held to the jobs the capsule's handlers run in about {@link #TARGET_NANOS}
 *       (a moving average of the handlers' time per job, their commits not counted: a slow commit
 *       is a reason to group), so slow jobs run alone and a transaction holds its locks and
 *       connection briefly; a transaction that still runs past twice that is committed early, and
 *       the slot's other jobs go on in the next one ({@link #budgetNanos()}).
 *   <li>A group that rolled back (a handler failed) returns the size to one, and it does not grow
 *       again for {@link #COOL_DOWN_NANOS}: a queue of failing jobs does not keep rolling back its
 *       neighbours.
 * </ul>
 */
final class Grouping {

  /** Most jobs one transaction carries under {@code auto}. */
  static final int AUTO_MAX = 20;

  /**
   * The time one transaction's handlers should take together under {@code auto}: 500 ms. Short
   * enough for locks and a JTA transaction, long enough that handlers slowed by a busy database
   * (tens of milliseconds a statement) still share transactions, which is when commits cost most.
   */
  static final long TARGET_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  /** After a group rolled back, how long {@code auto} keeps one job per transaction: 1 s. */
  static final long COOL_DOWN_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final int fixed; // jobs-per-transaction, or CapsuleConfig.AUTO

  // Guarded by this.
  private int size = 1;
  private double nanosPerJob; // moving average of handler run time per job; 0 while unknown
  private long coolUntil = System.nanoTime();

  private final Predicate<ClaimedJob> shareable;

  Grouping(CapsuleConfig config) {
    this(config, job -> true);
  }

  /** {@code shareable}: whether a job may share a transaction with others. */
  Grouping(CapsuleConfig config, Predicate<ClaimedJob> shareable) {
    this.fixed = config.jobsPerTransaction();
    this.shareable = Objects.requireNonNull(shareable);
  }

  /** Whether the size follows the backlog ({@code auto}). */
  boolean adaptive() {
    return fixed == CapsuleConfig.AUTO;
  }

  /** How many jobs per free slot the next claim asks for. */
  synchronized int perSlot() {
    if (!adaptive()) {
      return fixed;
    }
    if (nanosPerJob <= 0) {
      return size;
    }
    long fit = (long) (TARGET_NANOS / nanosPerJob);
    return (int) Math.max(1, Math.min(size, fit));
  }

  /** A claim that asked for {@code asked} jobs returned {@code got}. */
  synchronized void claimed(int got, int asked) {
    if (!adaptive()) {
      return;
    }
    if (got < asked) {
      size = 1;
    } else if (System.nanoTime() - coolUntil >= 0) {
      size = Math.min(AUTO_MAX, size * 2);
    }
  }

  /**
   * The handlers of {@code jobs} jobs ran for {@code nanos} in all (their commit not counted);
   * {@code rolledBack} when their shared transaction did.
   */
  synchronized void ran(int jobs, long nanos, boolean rolledBack) {
    if (jobs > 0) {
      double perJob = (double) nanos / jobs;
      nanosPerJob = nanosPerJob <= 0 ? perJob : 0.8 * nanosPerJob + 0.2 * perJob;
    }
    if (rolledBack && adaptive()) {
      size = 1;
      coolUntil = System.nanoTime() + COOL_DOWN_NANOS;
    }
  }

  /**
   * How long one transaction may run its handlers before it is committed and the slot's remaining
   * jobs go on in the next one; unbounded for a fixed size.
   */
  long budgetNanos() {
    return adaptive() ? 2 * TARGET_NANOS : Long.MAX_VALUE;
  }

  /**
   * Where the transaction that starts with {@code jobs[from]} ends (exclusive): the run of jobs
   * from there that may share it. A job that may not share one runs alone.
   */
  int groupEnd(List<ClaimedJob> jobs, int from) {
    if (!groupable(jobs.get(from))) {
      return from + 1;
    }
    int to = from + 1;
    while (to < jobs.size() && groupable(jobs.get(to))) {
      to++;
    }
    return to;
  }

  /**
   * Whether the job may share a transaction with others: a job whose handler runs without the
   * container's transaction ({@code JobTransaction.HANDLER}) must not (it commits nothing with the
   * others), so it always runs alone.
   */
  boolean groupable(ClaimedJob job) {
    return shareable.test(job);
  }

  /**
   * A job whose handler opens its own transactions shares none with other jobs: an adaptive capsule
   * runs such jobs alone, and a capsule with a fixed jobs-per-transaction above 1 must not read
   * such a queue.
   */
  static void requireUnbatched(EngineConfig config, Set<String> handlerTransactions) {
    for (CapsuleConfig cc : config.capsules()) {
      if (cc.jobsPerTransaction() == 1 || cc.adaptive()) {
        continue;
      }
      for (String q : cc.queues()) {
        if (handlerTransactions.contains(q)) {
          String key = "pgbus.capsule." + cc.name() + ".jobs-per-transaction";
          String message =
              key
                  + " is "
                  + cc.jobsPerTransaction()
                  + ", but the capsule reads queue '"
                  + q
                  + "', whose handler runs in its own transactions (JobTransaction.HANDLER),"
                  + " and such jobs never share a transaction: set it to 1, or read '"
                  + q
                  + "' from a capsule of its own";
          throw new InvalidConfigException(key, message);
        }
      }
    }
  }
}

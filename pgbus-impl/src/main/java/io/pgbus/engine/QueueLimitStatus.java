package io.pgbus.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A limited queue as the database has it now: its limits, its running jobs, and its due jobs split
 * by what they wait for.
 *
 * @param queue the queue
 * @param globalConcurrency its limit across the fleet, or null for none
 * @param keyConcurrency its limit per concurrency key
 * @param running its executions now, in every JVM: the distinct lanes of its running jobs, what the
 *     global limit counts (a worker slot's claimed group is one lane, its jobs run one after
 *     another; a job claimed without lanes is one of its own)
 * @param waitingOnLimit due jobs that no claim may take now: the queue is at its global limit, or
 *     their key is at its limit
 * @param waitingOnWorker due jobs a claim may take, waiting for a free worker
 * @param rateLimit job starts allowed per window, or null for no rate limit
 * @param rateWindow the rate's window, or null
 * @param startsInWindow the jobs started (claimed) in the current window
 * @param keyFifo a key's jobs start in enqueue order, one at a time ({@code key-fifo}); a job
 *     behind an older one of its key waits on the limit
 * @param keyFifoSkipDead under {@code keyFifo}: a dead job lets its key's later jobs pass
 */
public record QueueLimitStatus(
    String queue,
    Integer globalConcurrency,
    int keyConcurrency,
    long running,
    long waitingOnLimit,
    long waitingOnWorker,
    Integer rateLimit,
    Duration rateWindow,
    long startsInWindow,
    boolean keyFifo,
    boolean keyFifoSkipDead) {

  /** A queue with concurrency limits and no rate. */
  public QueueLimitStatus(
      String queue,
      Integer globalConcurrency,
      int keyConcurrency,
      long running,
      long waitingOnLimit,
      long waitingOnWorker) {
    this(
        queue,
        globalConcurrency,
        keyConcurrency,
        running,
        waitingOnLimit,
        waitingOnWorker,
        null,
        null,
        0,
        false,
        false);
  }

  /**
   * The key order as the doctor and readiness print it ({@code ", FIFO per key (a dead job holds
   * its key)"}); "" without FIFO.
   */
  public String describeFifo() {
    if (!keyFifo) {
      return "";
    }
    return keyFifoSkipDead
        ? ", FIFO per key (a dead job lets the later ones pass)"
        : ", FIFO per key (a dead job holds its key)";
  }

  /** The rate as the doctor and readiness print it ({@code ", rate 100 per 1m: 37 started"}). */
  public String describeRate() {
    return rateLimit == null
        ? ""
        : ", rate "
            + rateLimit
            + " per "
            + Durations.format(rateWindow)
            + ": "
            + startsInWindow
            + " started this window";
  }

  /**
   * The limited queues in one line for health data, for example {@code "partner_api(global 5, per
   * key 1: 5 running, 120 waiting on the limit, 0 on a worker)"}; "" when none.
   */
  public static String describe(List<QueueLimitStatus> limits) {
    var parts = new ArrayList<String>();
    for (QueueLimitStatus l : limits) {
      parts.add(
          l.queue()
              + "(global "
              + (l.globalConcurrency() == null ? "none" : l.globalConcurrency())
              + ", per key "
              + l.keyConcurrency()
              + l.describeFifo()
              + l.describeRate()
              + ": "
              + l.running()
              + " running, "
              + l.waitingOnLimit()
              + " waiting on the limit, "
              + l.waitingOnWorker()
              + " on a worker)");
    }
    return String.join(", ", parts);
  }
}

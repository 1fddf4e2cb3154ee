package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A capsule's slots: how many are busy, the jobs they hold, and since when each waits for an
 * executor thread or runs its handler. A slot is busy from the claim that fills it until its last
 * job is done, and is known by the id of its first job. The times are {@code System.nanoTime()}
 * values, passed in so that the bookkeeping can be checked without a clock.
 *
 * <p>Not thread-safe: the capsule guards it with the lock of its signal.
 */
final class Slots {

  /**
   * A claimed job that waits this long for an executor thread means the executor is too small: a
   * free thread takes a task at once. Warned about once per episode.
   */
  static final long STARVATION_WARNING_NANOS = TimeUnit.SECONDS.toNanos(10);

  private static final System.Logger LOG = System.getLogger(Capsule.class.getName());

  private final String capsule;
  private final int concurrency;
  private final String threadAdvice;
  private int busy;
  // One entry per busy slot whose handler started: first job id -> start of its latest handler.
  private final Map<Long, Long> runningSince = new HashMap<>();
  // One entry per slot handed to the executor and not started yet: first job id -> handed at.
  private final Map<Long, Long> waitingSince = new HashMap<>();
  // Every job claimed and not yet done, waiting for a thread or running.
  private final Map<Long, ClaimedJob> held = new LinkedHashMap<>();
  private boolean starvationWarned;

  /**
   * @param threadAdvice how many threads the executor needs, and why, for the starvation warning
   */
  Slots(String capsule, int concurrency, String threadAdvice) {
    this.capsule = capsule;
    this.concurrency = concurrency;
    this.threadAdvice = threadAdvice;
  }

  /** The slots of {@code config}, in an engine whose executor needs {@code threadsNeeded}. */
  static Slots of(CapsuleConfig config, boolean loopsOnExecutor, int threadsNeeded) {
    return new Slots(
        config.name(),
        config.concurrency(),
        (loopsOnExecutor ? ", since pgbus's loops hold theirs for good" : "")
            + ". Give it at least "
            + threadsNeeded
            + " threads, or a queue that makes new threads");
  }

  /** Slots busy now. */
  int busy() {
    return busy;
  }

  /** Slots a claim may fill now. */
  int free() {
    return concurrency - busy;
  }

  /** The jobs held now: running, or claimed and waiting for a thread. */
  List<ClaimedJob> held() {
    return List.copyOf(held.values());
  }

  /**
   * A claim filled these slots, each with one or more jobs, handed to the executor at {@code now}.
   */
  void filled(List<List<ClaimedJob>> slots, long now) {
    for (List<ClaimedJob> slot : slots) {
      waitingSince.put(slot.get(0).id(), now);
      slot.forEach(job -> held.put(job.id(), job));
    }
    busy += slots.size();
  }

  /** The executor gave the slot whose first job is {@code first} a thread. */
  void started(ClaimedJob first, long now) {
    waitingSince.remove(first.id());
    runningSince.put(first.id(), now);
  }

  /** A handler of the slot starts: the stall check counts the slot's time from here. */
  void handlerStarting(ClaimedJob first, long now) {
    runningSince.replace(first.id(), now);
  }

  /** The slot that ran {@code jobs} is free again, whether they ran or were handed back. */
  void done(List<ClaimedJob> jobs) {
    waitingSince.remove(jobs.get(0).id());
    runningSince.remove(jobs.get(0).id());
    jobs.forEach(job -> held.remove(job.id()));
    busy--;
  }

  /** How long the oldest slot handed to the executor has waited for a thread, or 0. */
  long oldestWait(long now) {
    return waitingSince.values().stream().mapToLong(since -> now - since).max().orElse(0);
  }

  /**
   * How long every slot has held a handler past {@code timeout} (the longest of the capsule's
   * queues), counted from the youngest of them; 0 or less while a slot is free or within it. Such
   * handlers ignored their interrupt, and the capsule can claim nothing.
   */
  long allStuckFor(long now, Duration timeout) {
    if (runningSince.size() < concurrency) {
      return 0;
    }
    long youngest = runningSince.values().stream().mapToLong(Long::longValue).max().orElse(now);
    return now - (youngest + timeout.toNanos());
  }

  /**
   * Warns when a slot has waited {@link #STARVATION_WARNING_NANOS} for a thread: the executor has
   * fewer threads than pgbus needs. Once per episode, which ends when no slot waits; true when it
   * warned now.
   */
  boolean warnIfStarving(long now) {
    long waited = oldestWait(now);
    if (waited < STARVATION_WARNING_NANOS) {
      if (waitingSince.isEmpty()) {
        starvationWarned = false;
      }
      return false;
    }
    if (starvationWarned) {
      return false;
    }
    starvationWarned = true;
    LOG.log(
        Level.WARNING,
        "pgbus capsule ''{0}'': a claimed job has waited {1} s for a thread of the executor"
            + " (pgbus.executor) and has not started: the executor has fewer threads than pgbus"
            + " needs{2}",
        capsule,
        TimeUnit.NANOSECONDS.toSeconds(waited),
        threadAdvice);
    return true;
  }
}

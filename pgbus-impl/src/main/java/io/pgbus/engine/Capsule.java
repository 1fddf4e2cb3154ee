package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A named worker group and its claim loop. One loop per capsule claims for all of its slots at
 * once, in strict queue order, and hands each slot's jobs to the executor; it claims one job per
 * free slot, so a claimed job starts at once, and more per slot only while a backlog shows or
 * jobs-per-transaction asks for it ({@link Grouping}).
 *
 * <p>The loop claims only when there is reason to ({@link ClaimReasons}): a wake for one of its
 * queues (from a NOTIFY, or from the engine's {@link Ticker}), a slot freed after a claim that
 * filled every slot (more work is likely waiting), or a known due time reached. It has no timer of
 * its own: an idle capsule issues no statement at all. The claim statement is the {@link
 * Claimer}'s, the busy slots and their jobs are counted in {@link Slots}.
 */
final class Capsule extends Loop {

  private static final System.Logger LOG = System.getLogger(Capsule.class.getName());

  /** How long the loop may sleep before it refreshes its progress beacon. */
  private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final CapsuleConfig config;
  private final Function<String, Duration> jobTimeouts; // by queue (pgbus.queue.*.job-timeout)
  private final Duration longestTimeout; // of this capsule's queues
  private final Executor executor;
  private final BatchRunner runner;
  private final Grouping grouping;
  private final Claimer claimer;

  private final ReentrantLock lock = signal().lock();
  private final Condition idle = lock.newCondition(); // a slot ended
  private static final long IDLE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final ClaimReasons reasons = new ClaimReasons(); // guarded by lock
  private final Slots slots; // guarded by lock
  private volatile Runnable claimedHook = () -> {};
  private volatile boolean handedBack; // the drain ran out: slots not started yet never start

  // Flow control (V14): which queues the database limits, and what to call with those of a
  // finished slot's jobs. Set once by the engine before start.
  private Predicate<String> limited = q -> false;
  private Consumer<Set<String>> limitFreed = q -> {};

  private volatile long beatNanos = System.nanoTime();
  private volatile boolean died; // an Error ended the loop
  private final ErrorBackoff errors;

  Capsule(
      CapsuleConfig config,
      Claimer claimer,
      Slots slots,
      Function<String, Duration> jobTimeouts,
      Duration maxErrorBackoff,
      Executor executor,
      BatchRunner runner,
      Runnable onConnectionError) {
    this.errors =
        new ErrorBackoff(
            "pgbus capsule '" + config.name() + "' (queues " + config.queues() + ")",
            Duration.ofMillis(100),
            maxErrorBackoff,
            onConnectionError);
    this.config = Objects.requireNonNull(config);
    this.jobTimeouts = Objects.requireNonNull(jobTimeouts);
    this.longestTimeout =
        config.queues().stream().map(jobTimeouts).max(Duration::compareTo).orElseThrow();
    this.executor = Objects.requireNonNull(executor);
    this.runner = Objects.requireNonNull(runner);
    this.grouping = new Grouping(config, job -> !runner.ownsTransactions(job));
    this.claimer = Objects.requireNonNull(claimer);
    this.slots = Objects.requireNonNull(slots);
  }

  /** Before start: how to tell limited queues, and whom to tell when their jobs finish. */
  void onLimitFreed(Predicate<String> limited, Consumer<Set<String>> freed) {
    this.limited = Objects.requireNonNull(limited);
    this.limitFreed = Objects.requireNonNull(freed);
  }

  /** This capsule now, for {@link EngineStatus}: one reading under the lock. */
  EngineStatus.CapsuleStatus status() {
    long now = System.nanoTime();
    int busy;
    long waited;
    long stuckFor;
    boolean stopped;
    lock.lock();
    try {
      busy = slots.busy();
      waited = slots.oldestWait(now);
      stuckFor = slots.allStuckFor(now, longestTimeout);
      stopped = hasEnded() && stopping();
    } finally {
      lock.unlock();
    }
    // No progress since the loop last claimed or scheduled a wait, or, when every slot holds a
    // handler that ran past the job timeout and ignored the interrupt, since the last of them
    // became overdue. A loop that an Error ended shows none from then on; one stopped on purpose
    // is fine.
    long sinceLastBeat = stopped ? 0 : Math.max(now - beatNanos, Math.max(0, stuckFor));
    return new EngineStatus.CapsuleStatus(
        config.name(),
        config.queues(),
        config.concurrency(),
        claimer.claims(),
        claimer.emptyClaims(),
        claimer.claimed(),
        busy,
        Duration.ofNanos(waited),
        Duration.ofNanos(sinceLastBeat),
        died,
        errors.failingFor());
  }

  /** Applies a wake that concerns this capsule. */
  void wake(Wake wake) {
    lock.lock();
    try {
      reasons.wake(wake, config.queues(), Instant.now());
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /** A job of ours will be due at {@code due} (a retry or a snooze decided in this JVM). */
  void dueAt(Instant due) {
    lock.lock();
    try {
      reasons.dueAt(due);
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /** The jobs this capsule holds now: running, or claimed and waiting for a thread. */
  List<ClaimedJob> held() {
    lock.lock();
    try {
      return slots.held();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Called after a claim that took jobs, so the heartbeat renews their leases soon (an idle JVM
   * beats only at its slow poll). It must be cheap and must not throw.
   */
  void onClaimed(Runnable r) {
    claimedHook = Objects.requireNonNull(r);
  }

  /**
   * For a stop whose drain ran out: the jobs this capsule still holds (running, or claimed and
   * waiting for a thread), which from now on never start here.
   */
  List<ClaimedJob> handBack() {
    lock.lock();
    try {
      handedBack = true;
      return slots.held();
    } finally {
      lock.unlock();
    }
  }

  /** Waits until no job runs, up to {@code timeout}; returns how many still run. */
  int awaitIdle(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      // A claim in progress when claiming stopped adds to inFlight only when it returns, so wait
      // for the loop to finish too, or jobs could start after the engine reported it drained.
      while (slots.busy() > 0 || (hasStarted() && !hasEnded())) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        // Not signal().await: the stop has rung it for good, so it would return at once, and this
        // loop would spin holding the lock that every finishing slot needs. The slice notices the
        // loop's end, which rings nothing here.
        idle.awaitNanos(Math.min(left, IDLE_CHECK_NANOS));
      }
      return slots.busy();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return slots.busy();
    } finally {
      lock.unlock();
    }
  }

  @Override
  protected void loop() throws InterruptedException {
    try {
      // Nothing a round throws ends the loop: a claim that failed (the database is away), or a
      // bug. Back off, then claim again and re-read the due times from the database. A loop that
      // backs off is alive (each round renews its beat): liveness must not ask for a restart that
      // cannot bring the database back. Readiness reports it as "claims failing".
      runRounds(this::claimWhenThereIsReason, errors, this::claimAgainAndResync);
    } catch (Error e) {
      died = true;
      LOG.log(
          Level.ERROR, "pgbus capsule '" + config.name() + "' stopped claiming: its loop died", e);
      throw e;
    }
  }

  private void claimAgainAndResync() {
    lock.lock();
    try {
      reasons.resyncNow();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for a reason to claim (a wake, a backlog, an alarm), then claims for the free slots.
   * Returns false when the capsule stops.
   */
  private boolean claimWhenThereIsReason() throws Exception {
    int free;
    ClaimReasons.Take take;
    lock.lock();
    try {
      while (true) {
        if (stopping()) {
          return false;
        }
        beatNanos = System.nanoTime();
        Instant now = Instant.now();
        free = slots.free();
        take = reasons.take(now, free);
        if (take != ClaimReasons.Take.WAIT) {
          break;
        }
        slots.warnIfStarving(System.nanoTime());
        signal().await(Math.max(1, reasons.sleepNanos(now, free, MAX_SLEEP_NANOS)));
      }
    } finally {
      lock.unlock();
    }
    claimAndDispatch(free, take == ClaimReasons.Take.CLAIM_AND_READ_DUE);
    return true;
  }

  /** The first and the longest wait before claiming again after the executor refused a job. */
  static final long REFUSED_FIRST_MS = 100;

  static final long REFUSED_MAX_MS = 5_000;

  private long refusedBackoffMs; // only the loop's thread: 0 while the executor takes jobs

  private void claimAndDispatch(int freeSlots, boolean refreshAlarm) throws Exception {
    int want = freeSlots * grouping.perSlot();
    long leasedAt = System.nanoTime(); // the leases start later, in the claim: a safe estimate
    Claimer.Claim claim = claimer.claim(freeSlots, want, refreshAlarm);
    grouping.claimed(claim.jobs().size(), want);
    List<List<ClaimedJob>> slots = claim.slots();
    lock.lock();
    try {
      this.slots.filled(slots, System.nanoTime());
      reasons.claimed(claim.full(), claim.nextDue());
    } finally {
      lock.unlock();
    }
    if (!claim.jobs().isEmpty()) {
      claimedHook.run();
    }
    for (int i = 0; i < slots.size(); i++) {
      List<ClaimedJob> slot = slots.get(i);
      try {
        executor.execute(() -> runSlot(slot, leasedAt));
      } catch (RuntimeException e) {
        // Usually a RejectedExecutionException; whatever it is, these jobs never start here.
        // An executor that refuses (a server shutting it down before the application stops, or
        // suspending) refuses the next claim's jobs too: back off, or the capsule claims, is
        // refused and hands back in a tight loop (65 times in 0.3 s in a Liberty server stop).
        boolean first = refusedBackoffMs == 0;
        refusedBackoffMs =
            first ? REFUSED_FIRST_MS : Math.min(REFUSED_MAX_MS, refusedBackoffMs * 2);
        // One WARNING per spell of refusals (the next claims may meet the same job): then DEBUG.
        LOG.log(
            first ? Level.WARNING : Level.DEBUG,
            "pgbus capsule ''{0}'': executor refused job {1} ({2}); handing it back and claiming"
                + " again in {3} ms, backing off up to "
                + REFUSED_MAX_MS
                + " ms while it refuses",
            config.name(),
            Long.toString(slot.get(0).id()), // not MessageFormat's 7,340,000,001
            e.toString(),
            refusedBackoffMs);
        claimer.jobsReturned();
        for (List<ClaimedJob> refused : slots.subList(i, slots.size())) {
          refused.forEach(runner::release);
          slotDone(refused);
        }
        if (signal().sleep(refusedBackoffMs)) {
          claimAgainAndResync(); // the handed-back jobs wait for no wake
        }
        return;
      }
    }
    refusedBackoffMs = 0;
  }

  private void runSlot(List<ClaimedJob> jobs, long leasedAt) {
    if (handedBack) {
      slotDone(jobs); // its jobs were released to the database at the end of the drain
      return;
    }
    lock.lock();
    try {
      slots.started(jobs.get(0), System.nanoTime());
    } finally {
      lock.unlock();
    }
    try {
      Instant due =
          runner.run(jobs, grouping, jobTimeouts, leasedAt, () -> handlerStarting(jobs.get(0)));
      if (due != null) {
        dueAt(due);
      }
    } finally {
      slotDone(jobs);
      freedLimits(jobs);
    }
  }

  /**
   * A claim held back by a limit took fewer jobs than it had slots for, and went to sleep with no
   * backlog: a finished job of a limited queue is its reason to claim again. This capsule claims at
   * once: it has the slot the job just left, and any capsule may take any job of the queue, so the
   * capacity the job freed is taken here. Other JVMs are woken (the queue's wake-up) only when this
   * capsule may not take it: it is stopping, or it reads several queues and may spend the slot on
   * an earlier one. Waking every JVM on every finished job would make each of them claim, in turn
   * under the queue's limit row, for a slot that this one takes. Unlimited queues skip all of it.
   */
  private void freedLimits(List<ClaimedJob> jobs) {
    Set<String> queues = null;
    for (ClaimedJob job : jobs) {
      if (limited.test(job.queue())) {
        queues = queues == null ? new TreeSet<>() : queues;
        queues.add(job.queue());
      }
    }
    if (queues == null) {
      return;
    }
    lock.lock();
    try {
      reasons.wakeUp();
      signal().signal();
    } finally {
      lock.unlock();
    }
    if (stopping() || config.queues().size() > 1) {
      limitFreed.accept(queues);
    }
  }

  /** A handler of the slot starts: the stall check counts the slot's time from here. */
  private void handlerStarting(ClaimedJob first) {
    lock.lock();
    try {
      slots.handlerStarting(first, System.nanoTime());
    } finally {
      lock.unlock();
    }
  }

  private void slotDone(List<ClaimedJob> jobs) {
    lock.lock();
    try {
      slots.done(jobs);
      idle.signalAll();
      signal().signal();
    } finally {
      lock.unlock();
    }
  }
}

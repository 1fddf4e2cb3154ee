package io.pgbus.engine;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * A named worker group and its claim loop. One loop per capsule claims for all of its slots at
 * once, in strict queue order, and hands each slot's jobs to the executor; it claims one job per
 * free slot, so a claimed job starts at once, and more per slot only while a backlog shows or
 * jobs-per-transaction asks for it ({@link Grouping}).
 *
 * <p>The loop claims only when there is reason to: a wake for one of its queues (from a NOTIFY, or
 * from the engine's {@link Ticker}), a slot freed after a claim that filled every slot (more work
 * is likely waiting), or a known due time reached. It has no timer of its own: an idle capsule
 * issues no statement at all.
 */
final class Capsule extends Loop {

  private static final System.Logger LOG = System.getLogger(Capsule.class.getName());

  /** How long the loop may sleep before it refreshes its progress beacon. */
  private static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(5);

  /**
   * A claimed job that waits this long for an executor thread means the executor is too small: a
   * free thread takes a task at once. Warned about once per episode (see {@link #executorWait}).
   */
  private static final long EXECUTOR_WAIT_WARNING_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final CapsuleConfig config;
  private final String workerId;
  private final ExecutionConfig execution;
  private final Function<String, Duration> jobTimeouts; // by queue (pgbus.queue.*.job-timeout)
  private final Duration longestTimeout; // of this capsule's queues
  private final JobStore store;
  private final DataSource dataSource;
  private final Executor executor;
  private final boolean loopsOnExecutor; // only for the starvation warning's advice
  private final int threadsNeeded; // only for the starvation warning's advice
  private final BatchRunner runner;
  private final Grouping grouping;
  private final ClaimFloors floors; // only the claim thread uses it

  private final ReentrantLock lock = signal().lock();
  private final java.util.concurrent.locks.Condition idle = lock.newCondition(); // a slot ended
  private static final long IDLE_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private final AtomicLong claims = new AtomicLong();
  private final AtomicLong emptyClaims = new AtomicLong();
  private final AtomicLong claimed = new AtomicLong();

  // Guarded by lock.
  private boolean woken = true;
  private boolean resync = true;
  private boolean backlog;
  private Instant alarm;
  private int inFlight;
  // One entry per busy slot: the id of the first job it runs -> System.nanoTime() at the start of
  // its latest handler.
  private final Map<Long, Long> runningSince = new HashMap<>();
  // One entry per slot handed to the executor and not started yet: first job id ->
  // System.nanoTime().
  private final Map<Long, Long> waitingSince = new HashMap<>();
  // Guarded by lock: every job claimed and not yet done, waiting for a thread or running.
  private final Map<Long, ClaimedJob> held = new java.util.LinkedHashMap<>();
  private volatile Runnable claimedHook = () -> {};
  private volatile boolean handedBack; // the drain ran out: slots not started yet never start
  private boolean executorWaitWarned;

  // Flow control (V14): which queues the database limits, and what to call with those of a
  // finished slot's jobs. Set once by the engine before start.
  private java.util.function.Predicate<String> limited = q -> false;
  private java.util.function.Consumer<java.util.Set<String>> limitFreed = q -> {};

  private volatile long beatNanos = System.nanoTime();
  private volatile boolean died; // an Error ended the loop
  private final ErrorBackoff errors;

  Capsule(
      CapsuleConfig config,
      String workerId,
      ExecutionConfig execution,
      Function<String, Duration> jobTimeouts,
      Duration maxErrorBackoff,
      JobStore store,
      DataSource dataSource,
      Executor executor,
      boolean loopsOnExecutor,
      int threadsNeeded,
      BatchRunner runner,
      Runnable onConnectionError) {
    this.errors =
        new ErrorBackoff(
            "pgbus capsule '" + config.name() + "' (queues " + config.queues() + ")",
            Duration.ofMillis(100),
            maxErrorBackoff,
            onConnectionError);
    this.loopsOnExecutor = loopsOnExecutor;
    this.threadsNeeded = threadsNeeded;
    this.config = Objects.requireNonNull(config);
    this.workerId = Objects.requireNonNull(workerId);
    this.execution = Objects.requireNonNull(execution);
    this.jobTimeouts = Objects.requireNonNull(jobTimeouts);
    this.longestTimeout =
        config.queues().stream().map(jobTimeouts).max(Duration::compareTo).orElseThrow();
    this.store = Objects.requireNonNull(store);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.executor = Objects.requireNonNull(executor);
    this.runner = Objects.requireNonNull(runner);
    this.grouping = new Grouping(config, job -> !runner.ownsTransactions(job));
    this.floors = new ClaimFloors(config.name());
  }

  /** Before start: how to tell limited queues, and whom to tell when their jobs finish. */
  void onLimitFreed(
      java.util.function.Predicate<String> limited,
      java.util.function.Consumer<java.util.Set<String>> freed) {
    this.limited = Objects.requireNonNull(limited);
    this.limitFreed = Objects.requireNonNull(freed);
  }

  CapsuleConfig config() {
    return config;
  }

  /** Claim statements issued (including empty ones). */
  long claims() {
    return claims.get();
  }

  /** Claim statements that found nothing: polling waste. */
  long emptyClaims() {
    return emptyClaims.get();
  }

  /** Jobs claimed in total. */
  long claimed() {
    return claimed.get();
  }

  /** Slots busy now: each runs the jobs of one claim, one or several to a transaction. */
  int inFlight() {
    lock.lock();
    try {
      return inFlight;
    } finally {
      lock.unlock();
    }
  }

  /**
   * How long the oldest slot handed to the executor has waited for a thread without starting, or
   * zero. Anything but a moment means the executor has fewer threads than pgbus needs: the engine's
   * loops (listener, ticker, leader, maintenance, one per capsule) hold theirs for good, so an
   * executor with a fixed number of threads and a queue (WildFly's default managed executor has two
   * per CPU) can leave none for jobs, which are then claimed and never run.
   */
  Duration executorWait() {
    lock.lock();
    try {
      return Duration.ofNanos(oldestWait(System.nanoTime()));
    } finally {
      lock.unlock();
    }
  }

  /**
   * How long the capsule has shown no progress: since its loop last claimed or scheduled a wait,
   * or, when every slot holds a handler that ran past the job timeout and ignored the interrupt,
   * since the last of them became overdue. A loop that ended without being stopped (an Error
   * escaped it) shows no progress from then on. Zero once stopped on purpose.
   */
  Duration sinceLastBeat() {
    long now = System.nanoTime();
    long stuckFor = 0;
    lock.lock();
    try {
      if (hasEnded() && stopping()) {
        return Duration.ZERO;
      }
      if (runningSince.size() >= config.concurrency()) {
        long youngest = runningSince.values().stream().mapToLong(Long::longValue).max().orElse(now);
        stuckFor = now - (youngest + longestTimeout.toNanos());
      }
    } finally {
      lock.unlock();
    }
    return Duration.ofNanos(Math.max(now - beatNanos, Math.max(0, stuckFor)));
  }

  /** This capsule now, for {@link EngineStatus}. */
  EngineStatus.CapsuleStatus status() {
    return new EngineStatus.CapsuleStatus(
        config.name(),
        config.queues(),
        config.concurrency(),
        claims(),
        emptyClaims(),
        claimed(),
        inFlight(),
        executorWait(),
        sinceLastBeat(),
        died,
        errors.failingFor());
  }

  /** Applies a wake that concerns this capsule. */
  void wake(Wake wake) {
    lock.lock();
    try {
      if (wake.everyone()) {
        woken = true;
        resync = true;
      }
      for (String q : config.queues()) {
        if (wake.now().contains(q)) {
          woken = true;
        }
        Instant due = wake.later().get(q);
        if (due != null) {
          alarm = earliest(alarm, due);
        }
      }
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /** A job of ours will be due at {@code due} (a retry or a snooze decided in this JVM). */
  void dueAt(Instant due) {
    lock.lock();
    try {
      alarm = earliest(alarm, due);
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  /**
   * For a stop whose drain ran out: the jobs this capsule still holds (running, or claimed and
   * waiting for a thread), which from now on never start here.
   */
  /** The jobs this capsule holds now: running, or claimed and waiting for a thread. */
  List<ClaimedJob> held() {
    lock.lock();
    try {
      return List.copyOf(held.values());
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

  List<ClaimedJob> handBack() {
    lock.lock();
    try {
      handedBack = true;
      return List.copyOf(held.values());
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
      while (inFlight > 0 || (hasStarted() && !hasEnded())) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        // Not signal().await: the stop has rung it for good, so it would return at once, and this
        // loop would spin holding the lock that every finishing slot needs. The slice notices the
        // loop's end, which rings nothing here.
        idle.awaitNanos(Math.min(left, IDLE_CHECK_NANOS));
      }
      return inFlight;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return inFlight;
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
          System.Logger.Level.ERROR,
          "pgbus capsule '" + config.name() + "' stopped claiming: its loop died",
          e);
      throw e;
    }
  }

  private void claimAgainAndResync() {
    lock.lock();
    try {
      woken = true;
      resync = true;
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
    boolean refreshAlarm;
    lock.lock();
    try {
      Instant now;
      while (true) {
        if (stopping()) {
          return false;
        }
        beatNanos = System.nanoTime();
        now = Instant.now();
        boolean alarmRang = alarm != null && !now.isBefore(alarm);
        free = config.concurrency() - inFlight;
        if (free > 0 && (woken || backlog || alarmRang)) {
          // Due times arrive with notifications and polls. An alarm that rang early (this
          // JVM's clock ahead of the database's) finds nothing, so it is set again from the
          // database rather than dropped.
          refreshAlarm = resync || alarmRang;
          break;
        }
        warnIfExecutorStarves();
        long sleep = free > 0 ? nanosUntil(now, alarm, MAX_SLEEP_NANOS) : MAX_SLEEP_NANOS;
        signal().await(Math.max(1, sleep));
      }
      woken = false;
      resync = false;
      backlog = false;
      if (alarm != null && !now.isBefore(alarm)) {
        alarm = null;
      }
    } finally {
      lock.unlock();
    }
    claimAndDispatch(free, refreshAlarm);
    return true;
  }

  /**
   * Nanoseconds from {@code now} until {@code alarm}, saturated to {@code [0, max]}: an alarm may
   * lie centuries ahead (a job due in the year 2400, a forged NOTIFY), and {@code Duration.toNanos}
   * overflows beyond 292 years. No alarm: {@code max}.
   */
  static long nanosUntil(Instant now, Instant alarm, long max) {
    if (alarm == null) {
      return max;
    }
    Duration left = Duration.between(now, alarm);
    if (left.isNegative()) {
      return 0;
    }
    return left.compareTo(Duration.ofNanos(max)) >= 0 ? max : left.toNanos();
  }

  /** The first and the longest wait before claiming again after the executor refused a job. */
  static final long REFUSED_FIRST_MS = 100;

  static final long REFUSED_MAX_MS = 5_000;

  private long refusedBackoffMs; // only the loop's thread: 0 while the executor takes jobs

  private void claimAndDispatch(int freeSlots, boolean refreshAlarm) throws Exception {
    int want = freeSlots * grouping.perSlot();
    List<List<ClaimedJob>> slots;
    List<ClaimedJob> jobs;
    Instant nextDue = null;
    long leasedAt = System.nanoTime(); // the leases start later, in the claim: a safe estimate
    try (Connection c = dataSource.getConnection()) {
      // The claim deals the jobs over the free slots (its lanes), and each slot runs its lane's
      // jobs one after another: a queue's global limit counts lanes, the handlers that can run
      // at once, not claimed rows (V19).
      ClaimFloors.Floors floorsUsed = floors.next();
      long claimStart = System.nanoTime();
      slots =
          store.jobClaimInLanes(
              c, config.queues(), want, freeSlots, workerId, execution.lease(), floorsUsed);
      long took = System.nanoTime() - claimStart;
      jobs = slots.stream().flatMap(List::stream).toList();
      floors.claimed(floorsUsed, jobs, took);
      if (jobs.size() < want && refreshAlarm) {
        nextDue = store.jobNextDue(c, config.queues());
      }
    }
    grouping.claimed(jobs.size(), want);
    claims.incrementAndGet();
    claimed.addAndGet(jobs.size());
    if (jobs.isEmpty()) {
      emptyClaims.incrementAndGet();
    }
    lock.lock();
    try {
      long handedAt = System.nanoTime();
      slots.forEach(slot -> waitingSince.put(slot.get(0).id(), handedAt));
      jobs.forEach(job -> held.put(job.id(), job));
      inFlight += slots.size();
      backlog = jobs.size() == want;
      if (nextDue != null) {
        alarm = earliest(alarm, nextDue);
      }
    } finally {
      lock.unlock();
    }
    if (!jobs.isEmpty()) {
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
        refusedBackoffMs =
            refusedBackoffMs == 0
                ? REFUSED_FIRST_MS
                : Math.min(REFUSED_MAX_MS, refusedBackoffMs * 2);
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus capsule ''{0}'': executor refused job {1} ({2}); handing it back and claiming"
                + " again in {3} ms",
            config.name(),
            slot.get(0).id(),
            e.toString(),
            refusedBackoffMs);
        floors.reset(); // the refused jobs go back with their run_at, maybe behind a floor
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
      waitingSince.remove(jobs.get(0).id());
      runningSince.put(jobs.get(0).id(), System.nanoTime());
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
    java.util.Set<String> queues = null;
    for (ClaimedJob job : jobs) {
      if (limited.test(job.queue())) {
        queues = queues == null ? new java.util.TreeSet<>() : queues;
        queues.add(job.queue());
      }
    }
    if (queues == null) {
      return;
    }
    lock.lock();
    try {
      woken = true;
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
      runningSince.replace(first.id(), System.nanoTime());
    } finally {
      lock.unlock();
    }
  }

  private void slotDone(List<ClaimedJob> jobs) {
    lock.lock();
    try {
      waitingSince.remove(jobs.get(0).id());
      runningSince.remove(jobs.get(0).id());
      jobs.forEach(job -> held.remove(job.id()));
      inFlight--;
      idle.signalAll();
      signal().signal();
    } finally {
      lock.unlock();
    }
  }

  // Guarded by lock.
  private long oldestWait(long now) {
    return waitingSince.values().stream().mapToLong(since -> now - since).max().orElse(0);
  }

  /** Once per episode, while a slot waits too long for a thread; guarded by lock. */
  private void warnIfExecutorStarves() {
    long waited = oldestWait(System.nanoTime());
    if (waited < EXECUTOR_WAIT_WARNING_NANOS) {
      if (waitingSince.isEmpty()) {
        executorWaitWarned = false;
      }
      return;
    }
    if (!executorWaitWarned) {
      executorWaitWarned = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus capsule ''{0}'': a claimed job has waited {1} s for a thread of the executor"
              + " (pgbus.executor) and has not started: the executor has fewer threads than pgbus"
              + " needs{2}. Give it at least {3} threads, or a queue that makes new threads",
          config.name(),
          TimeUnit.NANOSECONDS.toSeconds(waited),
          loopsOnExecutor ? ", since pgbus''s loops hold theirs for good" : "",
          threadsNeeded);
    }
  }

  /**
   * The threads an engine's executor needs so that no job waits: a thread per slot, and, when the
   * loops run on the executor too, the listener, the ticker, the leader, the maintenance loop, the
   * job-timeout watchdog (while jobs run) and a claim loop per capsule.
   */
  static int threadsNeeded(EngineConfig engine, boolean loopsOnExecutor) {
    int slots = engine.capsules().stream().mapToInt(CapsuleConfig::concurrency).sum();
    return loopsOnExecutor ? 5 + engine.capsules().size() + slots : slots;
  }

  /** The earlier of two times, either of which may be null (none). */
  static Instant earliest(Instant a, Instant b) {
    return a == null || (b != null && b.isBefore(a)) ? b : a;
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.DelayQueue;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Enforces the job timeout: interrupts a handler's worker thread once the handler has run for
 * longer than it may. Interrupting is all it can do; a handler that ignores the interrupt runs on
 * until its lease expires, and the lease and the fence on {@code attempt} take over from there.
 *
 * <p>Its loop runs on the engine's executor (in a container, the ManagedExecutorService), and only
 * while some job runs: it starts with the first watched attempt and ends a second after the last
 * one ended, so nothing lingers after an undeploy and no thread exists outside the container's
 * management. It is no {@link Loop}: it has nothing to stop, since it ends by itself once no job
 * runs.
 *
 * <p>It also knows which attempt runs on which thread, so a cancel of a running job ({@link
 * #running}, {@link Attempt#cancel}) interrupts the handler the same way a timeout does.
 */
final class Watchdog {

  private static final System.Logger LOG = System.getLogger(Watchdog.class.getName());

  /** How long the loop waits with nothing to watch before it ends. */
  private static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Executor executor;
  private final DelayQueue<Attempt> pending = new DelayQueue<>();
  private final AtomicBoolean looping = new AtomicBoolean();
  private final ConcurrentHashMap<Long, Attempt> byJob = new ConcurrentHashMap<>();

  Watchdog(Executor executor) {
    this.executor = Objects.requireNonNull(executor);
  }

  /**
   * Whether this JVM vouches for {@code job} in its heartbeat: yes unless its attempt runs here
   * past its timeout (interrupted, yet still running), so that its lease runs out and rescue takes
   * the job back, as the lease did before heartbeats. A job claimed and not yet started counts.
   */
  boolean vouchesFor(ClaimedJob job) {
    Attempt a = byJob.get(job.id());
    return a == null || a.job.attempt() != job.attempt() || a.alive(System.nanoTime());
  }

  /**
   * Starts watching the calling thread, which is about to run {@code running}'s handler; a cancel
   * or a timeout also cancels the statement that {@code connection} (the job's transaction, null:
   * none) runs at that moment.
   */
  Attempt watch(RunningJob running, Duration timeout, Connection connection) {
    var attempt =
        new Attempt(
            this, running, Thread.currentThread(), timeout, RunningStatement.of(connection));
    ClaimedJob job = running.claimed();
    pending.add(attempt);
    byJob.put(job.id(), attempt);
    if (looping.compareAndSet(false, true)) {
      try {
        executor.execute(this::loop);
      } catch (RejectedExecutionException e) {
        looping.set(false);
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus could not start its job-timeout watchdog ({0}); job {1} runs without a"
                + " timeout, its lease still bounds it",
            e.getMessage(),
            job.id());
      }
    }
    return attempt;
  }

  /** The watched attempt {@code attempt} of job {@code id} running here now, or null. */
  Attempt running(long id, int attempt) {
    Attempt a = byJob.get(id);
    return a != null && a.job.attempt() == attempt ? a : null;
  }

  /**
   * For a stop whose drain ran out, after the jobs were released: interrupts every handler still
   * running here, so that its thread (in a container, an EJB call that the undeploy waits for)
   * returns. Its job is no longer held, so whatever the handler then does is fenced out. Returns
   * how many it interrupted.
   */
  int interruptReleased() {
    int n = 0;
    for (Attempt a : byJob.values()) {
      if (a.release()) {
        n++;
      }
    }
    return n;
  }

  private void loop() {
    try {
      while (true) {
        Attempt due = pending.poll(IDLE_NANOS, TimeUnit.NANOSECONDS);
        if (due != null) {
          try {
            due.expire();
          } catch (RuntimeException e) {
            // Not one job's trouble may end the watch over the others.
            LOG.log(System.Logger.Level.ERROR, "pgbus job-timeout watchdog: expiring failed", e);
          }
          continue;
        }
        looping.set(false);
        // An attempt added after the poll gave up, before looping was cleared, found a loop
        // running and started none: take it on, unless a new loop already did.
        if (pending.isEmpty() || !looping.compareAndSet(false, true)) {
          return;
        }
      }
    } catch (InterruptedException e) {
      looping.set(false); // the executor is shutting down: the next watch starts a new loop
      Thread.currentThread().interrupt();
    }
  }

  /** One watched handler run. */
  static final class Attempt implements Delayed {
    private final Watchdog watchdog;
    private final RunningJob running;
    private final ClaimedJob job;
    private final Thread worker;
    private final Duration timeout;
    private final long deadline; // System.nanoTime()
    private final RunningStatement statement; // null: no connection to cancel on

    // Guarded by this: the interrupt happens only while the attempt has not ended, so none can
    // reach the worker after end() returned.
    private boolean ended;
    private boolean timedOut;
    private boolean cancelled;
    private boolean released;

    private Attempt(
        Watchdog watchdog,
        RunningJob running,
        Thread worker,
        Duration timeout,
        RunningStatement statement) {
      this.statement = statement;
      this.watchdog = watchdog;
      this.running = running;
      this.job = running.claimed();
      this.worker = worker;
      this.timeout = timeout;
      this.deadline = System.nanoTime() + timeout.toNanos();
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      return Long.compare(deadline, ((Attempt) other).deadline);
    }

    Duration timeout() {
      return timeout;
    }

    private synchronized boolean alive(long now) {
      return !ended && !timedOut && now - deadline < 0;
    }

    /**
     * Cancels the attempt: flags it for the handler and interrupts it, unless it has ended. The
     * attempt then ends as cancelled, whatever the handler does; one that ignores the interrupt is
     * still interrupted again at its timeout. Returns whether the handler was still running.
     */
    synchronized boolean cancel() {
      if (ended) {
        return false;
      }
      cancelled = true;
      running.requestCancellation();
      interrupt(System.Logger.Level.INFO, "was cancelled while running");
      cancelStatement();
      return true;
    }

    /** Interrupts the handler's thread, saying why; called under this lock, before {@link #end}. */
    private void interrupt(System.Logger.Level level, String why) {
      LOG.log(level, "{0} {1}; interrupting {2}", JobRunner.named(job), why, worker.getName());
      worker.interrupt();
    }

    /**
     * Cancels the SQL statement the job's connection runs, if any; called under this lock and only
     * before {@link #end}, so the connection is still the job's (see {@link RunningStatement}).
     */
    private void cancelStatement() {
      if (statement != null) {
        statement.cancel(job);
      }
    }

    /** Interrupts a handler whose job a drain released; see {@link Watchdog#interruptReleased}. */
    private synchronized boolean release() {
      if (ended) {
        return false;
      }
      released = true;
      // DEBUG: the drain's release already named the job, once (StopRelease.handBack).
      interrupt(System.Logger.Level.DEBUG, "still ran after the drain and was released");
      return true;
    }

    /** Whether a drain released the job while its handler ran; read after {@link #end}. */
    synchronized boolean released() {
      return released;
    }

    /** Whether {@link #cancel} reached the handler before it ended; read after {@link #end}. */
    synchronized boolean cancelled() {
      return cancelled;
    }

    private synchronized void expire() {
      if (ended) {
        return;
      }
      timedOut = true;
      interrupt(System.Logger.Level.WARNING, "ran past its timeout of " + timeout);
      cancelStatement();
    }

    /**
     * Stops watching; call it on the worker thread as soon as the handler returned or threw.
     * Returns whether the attempt timed out, was cancelled or released, and then clears the
     * interrupt this watchdog sent, so it cannot leak into the settling of the job or into the next
     * job on this thread.
     */
    boolean end() {
      boolean expired;
      synchronized (this) {
        ended = true;
        expired = timedOut || cancelled || released;
      }
      watchdog.pending.remove(this);
      watchdog.byJob.remove(job.id(), this);
      if (expired) {
        Thread.interrupted();
      }
      return expired;
    }
  }
}

package io.pgbus.engine;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one idiom of every long-running engine loop, after River's start/stop base service and
 * db-scheduler's {@code RunUntilShutdown}: {@link #start} once on a thread the caller chooses (its
 * own thread factory, or a container's managed executor), {@link #stop} from any thread at any time
 * (twice, or before start, is fine), and sleep only on the loop's {@link WakeSignal}, which a stop
 * rings: no wait outlasts a stop, an error backoff ({@link #backOff}) included.
 *
 * <p>A subclass writes one {@link #loop} that runs while not {@link #stopping()}, most often as
 * {@link #runRounds}. A stop, an interrupt (its flag restored) or the end of the loop's work ends
 * it; no exception does (see {@link ErrorBackoff}).
 */
public abstract class Loop implements Runnable {

  private static final System.Logger LOG = System.getLogger(Loop.class.getName());

  private final WakeSignal signal = new WakeSignal();
  private final AtomicBoolean started = new AtomicBoolean();
  private final CountDownLatch finished = new CountDownLatch(1);
  private volatile boolean ended;
  private volatile Executor executor;
  private volatile boolean moveAsked;

  /**
   * Runs the loop on {@code executor}, once: later calls, and a call after {@link #stop}, do
   * nothing. Throws what the executor throws (a refused task), and then the loop may be started
   * again.
   */
  public final void start(Executor executor) {
    if (signal.stopped() || !started.compareAndSet(false, true)) {
      return;
    }
    this.executor = executor;
    try {
      executor.execute(this);
    } catch (RuntimeException e) {
      started.set(false);
      throw e;
    }
  }

  /** Asks the loop to stop, and returns at once; the loop ends its current round first. */
  public final void stop() {
    signal.stop();
  }

  /**
   * Asks the loop to stop and waits up to {@code timeout} for it to end; true when it ended, or
   * never started.
   */
  public final boolean stop(Duration timeout) {
    stop();
    if (!started.get()) {
      return true;
    }
    try {
      return finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public final void run() {
    started.set(true);
    boolean moved = false;
    try {
      do {
        loop();
      } while (moveAsked && !stopping() && !(moved = moveOn()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (!moved) {
        ended = true;
        finished.countDown();
        signal.signal(); // for whoever waits on the signal for the end, see hasEnded
      }
    }
  }

  /*
   * Runs the loop again on a fresh task of its executor; false (the loop goes on here) when the
   * executor refuses. The task this thread ran ends, and with it the container's unit of work
   * around it: Open Liberty keeps a loop thread's pooled connections in the local transaction
   * containment of the whole task, so a connection that broke there (a PgBouncer or database
   * restart) was never given back, and each loop took one more from the pool (issue #33).
   */
  private boolean moveOn() {
    moveAsked = false;
    try {
      executor.execute(this);
      return true;
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus: {0} could not move to a fresh thread ({1}); it goes on on this one",
          getClass().getSimpleName(),
          e.toString());
      return false;
    }
  }

  /**
   * Asks the loop to go on on a fresh task of its executor once {@link #loop} returns, after a
   * round lost its database connection (see {@link #run}); {@link #loop} returns early while {@link
   * #moving()}.
   */
  protected final void moveAfter(Throwable failure) {
    if (ErrorBackoff.connectionError(failure)) {
      moveAsked = true;
    }
  }

  /** Whether the loop asked to move to a fresh thread: {@link #loop} should return. */
  protected final boolean moving() {
    return moveAsked;
  }

  /** The loop's rounds; returns when {@link #stopping()}, or earlier when its work is done. */
  protected abstract void loop() throws InterruptedException;

  /** Whether a stop was asked for. */
  protected final boolean stopping() {
    return signal.stopped();
  }

  /** Whether the loop ever started to run. */
  protected final boolean hasStarted() {
    return started.get();
  }

  /** Whether the loop has ended; the signal is rung right after. */
  protected final boolean hasEnded() {
    return ended;
  }

  /** What the loop sleeps on; a stop rings it. */
  protected final WakeSignal signal() {
    return signal;
  }

  /** One round of a loop that {@link #runRounds runs rounds}; false ends the loop. */
  @FunctionalInterface
  protected interface Round {
    boolean run() throws Exception;
  }

  /**
   * Runs rounds until one returns false, or a stop: the loop's edge, where it meets every failure.
   * A round that throws is logged by {@code errors}, then {@code afterFailure} runs, and the loop
   * {@link #backOff backs off}; one that lost its connection then {@link #moveAfter moves} to a
   * fresh thread. A round that returns resets the backoff.
   */
  protected final void runRounds(Round round, ErrorBackoff errors, Runnable afterFailure)
      throws InterruptedException {
    while (!stopping() && !moving()) {
      try {
        if (!round.run()) {
          return;
        }
        errors.succeeded();
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        afterFailure.run();
        backOff(errors, e);
        moveAfter(e);
      }
    }
  }

  /**
   * A round failed: logs it through {@code errors} and waits out the backoff, which only a stop
   * cuts short. Returns false when stopping.
   */
  protected final boolean backOff(ErrorBackoff errors, Exception failure)
      throws InterruptedException {
    return signal.sleep(errors.failed(failure));
  }
}

package io.pgbus.engine;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Enforces the job timeout: interrupts a handler's worker thread once the handler has run for
 * longer than it may. Interrupting is all it can do; a handler that ignores the interrupt runs on
 * until its lease expires, and the lease and the fence on {@code attempt} take over from there.
 *
 * <p>One timer thread serves every capsule of an engine, and only while some job runs: it ends a
 * second after the last watched attempt did, so nothing lingers after an undeploy.
 */
final class Watchdog {

  private static final System.Logger LOG = System.getLogger(Watchdog.class.getName());

  private final ScheduledThreadPoolExecutor timer;

  Watchdog() {
    timer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "pgbus-job-timeout");
              t.setDaemon(true);
              // Do not pin the application's class loader from a thread the container does not
              // manage.
              t.setContextClassLoader(null);
              return t;
            });
    timer.setKeepAliveTime(1, TimeUnit.SECONDS);
    timer.allowCoreThreadTimeOut(true);
    timer.setRemoveOnCancelPolicy(true);
  }

  /** Starts watching the calling thread, which is about to run {@code job}'s handler. */
  Attempt watch(ClaimedJob job, Duration timeout) {
    var attempt = new Attempt(job, Thread.currentThread(), timeout);
    attempt.alarm = timer.schedule(attempt::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
    return attempt;
  }

  /** One watched handler run. */
  static final class Attempt {
    private final ClaimedJob job;
    private final Thread worker;
    private final Duration timeout;
    private volatile ScheduledFuture<?> alarm;

    // Guarded by this: the interrupt happens only while the attempt has not ended, so none can
    // reach the worker after end() returned.
    private boolean ended;
    private boolean timedOut;

    private Attempt(ClaimedJob job, Thread worker, Duration timeout) {
      this.job = job;
      this.worker = worker;
      this.timeout = timeout;
    }

    Duration timeout() {
      return timeout;
    }

    private synchronized void expire() {
      if (ended) {
        return;
      }
      timedOut = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus job {0} (queue {1}, attempt {2}) ran past its timeout of {3}; interrupting {4}",
          job.id(),
          job.queue(),
          job.attempt(),
          timeout,
          worker.getName());
      worker.interrupt();
    }

    /**
     * Stops watching; call it on the worker thread as soon as the handler returned or threw.
     * Returns whether the attempt timed out, and then clears the interrupt this watchdog sent,
     * so it cannot leak into the settling of the job or into the next job on this thread.
     */
    boolean end() {
      boolean expired;
      synchronized (this) {
        ended = true;
        expired = timedOut;
      }
      ScheduledFuture<?> a = alarm;
      if (a != null) {
        a.cancel(false);
      }
      if (expired) {
        Thread.interrupted();
      }
      return expired;
    }
  }
}

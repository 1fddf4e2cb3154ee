package io.pgbus.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * "Wake me, or time out": what every engine loop sleeps on. A {@link #signal} (new work, a changed
 * state) ends the current or the next {@link #await} early; signals coalesce, so many before a wait
 * end one wait. A {@link #stop} is final: it ends every wait, {@link #sleep}s included, and every
 * later wait returns at once.
 *
 * <p>A loop whose state is guarded by a lock shares the signal's {@link #lock()}: it checks its
 * state and waits while holding it, so no signal can slip in between the check and the wait. Such a
 * loop treats a return from {@code await} as "look again", never as proof that something changed.
 */
public final class WakeSignal {

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private boolean signalled; // guarded by lock
  private volatile boolean stopped;

  /** The lock the signal waits under; a loop may guard its own state with it. */
  public ReentrantLock lock() {
    return lock;
  }

  /** Ends the current wait, or else the next one. */
  public void signal() {
    ring(false);
  }

  /** Ends every wait for good. Idempotent. */
  public void stop() {
    ring(true);
  }

  private void ring(boolean stop) {
    lock.lock();
    try {
      if (stop) {
        stopped = true;
      } else {
        signalled = true;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  public boolean stopped() {
    return stopped;
  }

  /**
   * Waits until signalled or stopped, at most {@code nanos}, and takes the signal. Returns whether
   * it was woken rather than timed out.
   */
  public boolean await(long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (!signalled && !stopped && left > 0) {
        left = changed.awaitNanos(left);
      }
      boolean woken = signalled || stopped;
      signalled = false;
      return woken;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits out {@code millis}, as after a failed round: a signal does not cut it short (it stays for
   * the next {@link #await}), only a stop does. Returns false when stopped.
   */
  public boolean sleep(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    lock.lock();
    try {
      long left;
      while (!stopped && (left = deadline - System.nanoTime()) > 0) {
        changed.awaitNanos(left);
      }
      return !stopped;
    } finally {
      lock.unlock();
    }
  }
}

package io.pgbus.engine;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where an engine's work runs when the container gives no executor or no thread factory: Java SE
 * defaults, and the adapter that starts each long-running loop on a thread of its own.
 */
final class EngineThreads {

  private EngineThreads() {}

  /** The executor an engine owns (and shuts down on stop) when none was given: daemon threads. */
  static ExecutorService owned() {
    AtomicInteger n = new AtomicInteger();
    return Executors.newCachedThreadPool(
        r -> {
          Thread t = new Thread(r, "pgbus-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * Starts each task on a new thread of {@code factory}: the loops then never hold a thread of the
   * executor that runs the jobs. A factory that makes no thread (a ManagedThreadFactory of a
   * stopping application) is refused, as an executor would refuse.
   */
  static Executor eachOnItsOwn(ThreadFactory factory) {
    return task -> {
      Thread t = factory.newThread(task);
      if (t == null) {
        throw new RejectedExecutionException(
            "the loop thread factory made no thread (is the application stopping?)");
      }
      t.start();
    };
  }
}

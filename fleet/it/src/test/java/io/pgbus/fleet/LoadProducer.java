package io.pgbus.fleet;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueues jobs at a steady rate on one connection, as a fleet's producers would: every 100 ms as
 * many as the rate owes by then (so a slow enqueue is caught up, not lost), in one {@code
 * pgbus.enqueue_many} call. It never waits for the consumers: a fleet that falls behind shows as a
 * backlog and as claim latency.
 */
final class LoadProducer implements AutoCloseable {

  private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final FleetDatabase db;
  private final String queue;
  private final int perSecond;
  private final int sleepMs;
  private final AtomicLong enqueued = new AtomicLong();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread = new Thread(this::run, "load-producer");
  private volatile Exception failure;

  LoadProducer(FleetDatabase db, String queue, int perSecond, int sleepMs) {
    if (perSecond < 10 || perSecond > 100_000) {
      throw new IllegalArgumentException("rate must be 10..100000 jobs/s, was " + perSecond);
    }
    this.db = db;
    this.queue = queue;
    this.perSecond = perSecond;
    this.sleepMs = sleepMs;
    thread.setDaemon(true);
  }

  LoadProducer start() {
    thread.start();
    return this;
  }

  private void run() {
    long start = System.nanoTime();
    try (Connection c = db.connect()) {
      do {
        long owed = (System.nanoTime() - start) * perSecond / TimeUnit.SECONDS.toNanos(1);
        int n = (int) Math.min(10_000, owed - enqueued.get());
        if (n > 0) {
          FleetDatabase.enqueue(c, queue, n, sleepMs);
          enqueued.addAndGet(n);
        }
      } while (!stop.await(TICK_NANOS, TimeUnit.NANOSECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (SQLException | RuntimeException e) {
      failure = e;
    }
  }

  /** Jobs enqueued (committed) so far; fails if the producer failed. */
  long enqueued() {
    if (failure != null) {
      throw new AssertionError("the producer failed: " + failure, failure);
    }
    return enqueued.get();
  }

  /** Stops enqueuing; returns once the last batch committed. */
  @Override
  public void close() throws InterruptedException {
    stop.countDown();
    thread.join(30_000);
  }
}

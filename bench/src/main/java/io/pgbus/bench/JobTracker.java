package io.pgbus.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the consumers of one run did: when each job's handler started, how many finished, and when
 * the last one finished. Both systems call it from their worker threads; it never blocks them.
 */
final class JobTracker {

  private final ConcurrentHashMap<Long, Long> startedAt = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Long, Long> committedAt = new ConcurrentHashMap<>();
  private final AtomicLong started = new AtomicLong();
  private final AtomicLong finished = new AtomicLong();
  private final ConcurrentLinkedQueue<Long> wakes = new ConcurrentLinkedQueue<>();
  private volatile long lastFinishedNanos;
  // The wall clock at a known nanoTime, to place the database's timestamps on this JVM's nanoTime.
  private final long baseNanos = System.nanoTime();
  private final Instant baseWall = Instant.now();

  /** The listener handed a wake-up to the consumers (pgbus: the engine's wakes port). */
  void woke() {
    wakes.add(System.nanoTime());
  }

  /** A handler is starting job {@code id}. */
  void started(long id) {
    startedAt.putIfAbsent(id, System.nanoTime());
    started.incrementAndGet();
  }

  /** Job {@code id} is done and its completion committed. */
  void finished(long id) {
    lastFinishedNanos = System.nanoTime();
    finished.incrementAndGet();
  }

  /** The producer's commit of job {@code id} returned at {@code nanos}. */
  void committed(long id, long nanos) {
    committedAt.put(id, nanos);
  }

  /** The ids of the jobs whose commit was recorded. */
  long[] committedIds() {
    return committedAt.keySet().stream().mapToLong(Long::longValue).toArray();
  }

  /** A wall-clock instant (such as the database's now()) on this JVM's nanoTime scale. */
  long nanosOf(Instant wall) {
    return baseNanos + Duration.between(baseWall, wall).toNanos();
  }

  long started() {
    return started.get();
  }

  long finished() {
    return finished.get();
  }

  long lastFinishedNanos() {
    return lastFinishedNanos;
  }

  /** Waits until {@code count} jobs have finished; false on timeout. */
  boolean awaitFinished(long count, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (finished.get() < count) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      // Polling here costs nothing measured: the end time is taken by finished() itself.
      Sleep.millis(2);
    }
    return true;
  }

  /** Waits until {@code count} handlers have started; false on timeout. */
  boolean awaitStarted(long count, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (started.get() < count) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Sleep.millis(2);
    }
    return true;
  }

  /**
   * Splits each job's latency at the wake that preceded its handler start: {commit to wake, wake to
   * handler start} in microseconds, each sorted. The first part is PostgreSQL delivering the
   * notification to the listener thread; the second is the consumer reacting (hand-offs, claim
   * statement, dispatch).
   */
  long[][] latencyPartsMicros() {
    long[] w = wakes.stream().mapToLong(Long::longValue).sorted().toArray();
    var toWake = new ArrayList<Long>();
    var toStart = new ArrayList<Long>();
    committedAt.forEach(
        (id, committed) -> {
          Long started = startedAt.get(id);
          if (started == null) {
            return;
          }
          int i = Arrays.binarySearch(w, started);
          int last = i >= 0 ? i : -i - 2;
          if (last < 0) {
            return;
          }
          toWake.add(Math.max(0, w[last] - committed) / 1_000);
          toStart.add(Math.max(0, started - Math.max(w[last], committed)) / 1_000);
        });
    return new long[][] {
      toWake.stream().mapToLong(Long::longValue).sorted().toArray(),
      toStart.stream().mapToLong(Long::longValue).sorted().toArray()
    };
  }

  /**
   * Splits each job's latency at a moment of its own, given in this JVM's nanoTime (for pgbus: when
   * the database began the claim that took it): {commit to that moment, that moment to handler
   * start} in microseconds, each sorted. Jobs without the moment are left out.
   */
  long[][] latencyPartsMicros(Map<Long, Long> middleNanos) {
    var toMiddle = new ArrayList<Long>();
    var toStart = new ArrayList<Long>();
    committedAt.forEach(
        (id, committed) -> {
          Long started = startedAt.get(id);
          Long middle = middleNanos.get(id);
          if (started == null || middle == null) {
            return;
          }
          toMiddle.add(Math.max(0, middle - committed) / 1_000);
          toStart.add(Math.max(0, started - Math.max(middle, committed)) / 1_000);
        });
    return new long[][] {
      toMiddle.stream().mapToLong(Long::longValue).sorted().toArray(),
      toStart.stream().mapToLong(Long::longValue).sorted().toArray()
    };
  }

  /**
   * Commit-to-handler-start latencies in microseconds of every job with both times. A handler can
   * start a hair before the producer's commit returns (the server signals the listener while the
   * commit acknowledgement is in flight); such a latency counts as 0.
   */
  long[] latenciesMicros() {
    return committedAt.entrySet().stream()
        .filter(e -> startedAt.containsKey(e.getKey()))
        .mapToLong(e -> Math.max(0, startedAt.get(e.getKey()) - e.getValue()) / 1_000)
        .sorted()
        .toArray();
  }

  /**
   * Commit-to-handler-start latencies in microseconds, sorted, of the jobs whose handler started in
   * [{@code fromNanos}, {@code toNanos}): what a window of a steady load delivered, also when the
   * consumers fall behind and start jobs committed windows ago.
   */
  long[] latenciesMicros(long fromNanos, long toNanos) {
    return startedAt.entrySet().stream()
        .filter(e -> e.getValue() >= fromNanos && e.getValue() < toNanos)
        .filter(e -> committedAt.containsKey(e.getKey()))
        .mapToLong(e -> Math.max(0, e.getValue() - committedAt.get(e.getKey())) / 1_000)
        .sorted()
        .toArray();
  }
}

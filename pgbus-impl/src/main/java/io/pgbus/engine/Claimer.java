package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * A capsule's claim statement, and what it keeps from one claim to the next: the floors ({@link
 * ClaimFloors}) and the counters. The claim deals the jobs over the free slots (its lanes), and
 * each slot runs its lane's jobs one after another: a queue's global limit counts lanes, the
 * handlers that can run at once, not claimed rows (V19).
 *
 * <p>Only the capsule's loop thread claims; the counters may be read from any thread.
 */
final class Claimer {

  /**
   * What one claim took.
   *
   * @param slots the jobs of each filled slot, in lane order
   * @param jobs all of them
   * @param nextDue the queues' next due time, when it was read (else null)
   * @param full whether it took all it asked for: a backlog is likely
   */
  record Claim(
      List<List<ClaimedJob>> slots, List<ClaimedJob> jobs, Instant nextDue, boolean full) {}

  private final List<String> queues;
  private final String workerId;
  private final Duration lease;
  private final JobStore store;
  private final DataSource dataSource;
  private final ClaimFloors floors;
  private final AtomicLong claims = new AtomicLong();
  private final AtomicLong emptyClaims = new AtomicLong();
  private final AtomicLong claimed = new AtomicLong();

  Claimer(
      CapsuleConfig config,
      String workerId,
      Duration lease,
      JobStore store,
      DataSource dataSource) {
    this.queues = config.queues();
    this.workerId = workerId;
    this.lease = lease;
    this.store = store;
    this.dataSource = dataSource;
    this.floors = new ClaimFloors(config.name());
  }

  /**
   * Claims up to {@code want} jobs for {@code freeSlots} slots; when it takes fewer and {@code
   * readDue}, it also reads the queues' next due time, on the same connection.
   */
  Claim claim(int freeSlots, int want, boolean readDue) throws SQLException {
    List<List<ClaimedJob>> slots;
    List<ClaimedJob> jobs;
    Instant nextDue = null;
    try (Connection c = dataSource.getConnection()) {
      ClaimFloors.Floors floorsUsed = floors.next();
      long claimStart = System.nanoTime();
      slots = store.jobClaimInLanes(c, queues, want, freeSlots, workerId, lease, floorsUsed);
      long took = System.nanoTime() - claimStart;
      jobs = slots.stream().flatMap(List::stream).toList();
      floors.claimed(floorsUsed, jobs, took);
      if (jobs.size() < want && readDue) {
        nextDue = store.jobNextDue(c, queues);
      }
    }
    claims.incrementAndGet();
    claimed.addAndGet(jobs.size());
    if (jobs.isEmpty()) {
      emptyClaims.incrementAndGet();
    }
    return new Claim(slots, jobs, nextDue, jobs.size() == want);
  }

  /** Jobs went back with their run_at, maybe behind a floor: the next claim is a full one. */
  void jobsReturned() {
    floors.reset();
  }

  /** Claim statements issued, empty ones included. */
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
}

package io.pgbus.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A capsule's claim floors (docs/schema.md, "Claim floors"): where each (queue, priority level) may
 * start its next claim, so that a claim does not step over the index entries of every job claimed
 * since the oldest snapshot of the database.
 *
 * <p>Why: a claimed job leaves its entry in {@code job_claim_idx} until vacuum removes it, and a
 * transaction holding a snapshot anywhere in the database keeps vacuum from removing any of them.
 * Each claim then walks all of them from the front of the level, visiting the heap for each: at
 * 1,000 jobs/s, 289 ms per claim after ten minutes (docs/performance.md). A floor starts the index
 * range after them.
 *
 * <p>How: floors are used only while claims are slow. {@link #SLOW_IN_A_ROW} claims without floors
 * (full claims) in a row that take {@link #SLOW} or more engage them; from then on each (queue,
 * level) gets as its floor the earliest {@code run_at} this capsule claimed there, less {@link
 * #GRACE}, and a floor only moves forward. At least every {@link #FULL_CLAIM_EVERY} a claim goes
 * without floors: it takes any job a floor hid, and a fast one disengages the floors. What a floor
 * can hide, each for at most that interval: a job whose enqueuing transaction began more than
 * {@code GRACE} before a job already claimed and committed after that claim (a job's {@code run_at}
 * is its transaction's start), a job enqueued with a {@code run_at} in the past, a job handed back
 * with its old {@code run_at} (this capsule's own hand-backs clear the floors at once). Strict
 * queue and priority order hold among the jobs a claim can see. Only the capsule's claim thread
 * uses an instance.
 */
final class ClaimFloors {

  private static final System.Logger LOG = System.getLogger(ClaimFloors.class.getName());

  /** A full claim that takes this long or longer is slow. */
  static final Duration SLOW = Duration.ofMillis(50);

  /**
   * Slow full claims in a row that engage the floors. One is not enough: the first claim on each
   * pooled connection compiles the PL/pgSQL function (tens of ms), and a busy machine makes single
   * claims slow (at 25 ms, three in a row still happened 38 times in one CI unit run on 2 loaded
   * cores); a held snapshot makes every claim slow, and more so with each minute: at 1,000 jobs/s,
   * 50 ms within about two minutes.
   */
  static final int SLOW_IN_A_ROW = 3;

  /** Subtracted from the earliest run_at claimed: a late commit within it is not hidden. */
  static final Duration GRACE = Duration.ofSeconds(2);

  /** The longest time between two claims without floors while floors are engaged. */
  static final Duration FULL_CLAIM_EVERY = Duration.ofSeconds(10);

  /** The arrays of one claim's floors, one entry per (queue, level). */
  record Floors(List<String> queues, List<Integer> priorities, List<Instant> runAts) {}

  private record Level(String queue, int priority) {}

  private final String capsule;
  private final LongSupplier nanoTime;
  private final Map<Level, Instant> floors = new HashMap<>();
  private boolean engaged;
  private long lastFullClaim;
  private int slowInARow;

  ClaimFloors(String capsule) {
    this(capsule, System::nanoTime);
  }

  ClaimFloors(String capsule, LongSupplier nanoTime) {
    this.capsule = capsule;
    this.nanoTime = nanoTime;
  }

  /** The floors for the next claim; null: claim without floors. */
  Floors next() {
    if (!engaged
        || floors.isEmpty()
        || nanoTime.getAsLong() - lastFullClaim >= FULL_CLAIM_EVERY.toNanos()) {
      return null;
    }
    var queues = new ArrayList<String>(floors.size());
    var priorities = new ArrayList<Integer>(floors.size());
    var runAts = new ArrayList<Instant>(floors.size());
    floors.forEach(
        (level, runAt) -> {
          queues.add(level.queue());
          priorities.add(level.priority());
          runAts.add(runAt);
        });
    return new Floors(queues, priorities, runAts);
  }

  /**
   * After a claim: {@code used} is what {@link #next} gave it, {@code jobs} what it took, {@code
   * tookNanos} how long its statement ran.
   */
  void claimed(Floors used, List<ClaimedJob> jobs, long tookNanos) {
    if (used == null) {
      lastFullClaim = nanoTime.getAsLong();
      boolean slowClaim = tookNanos >= SLOW.toNanos();
      slowInARow = slowClaim ? slowInARow + 1 : 0;
      // Engaged: one fast full claim ends it. Not engaged: it takes SLOW_IN_A_ROW slow ones.
      boolean slow = engaged ? slowClaim : slowInARow >= SLOW_IN_A_ROW;
      if (slow != engaged) {
        LOG.log(
            System.Logger.Level.INFO,
            slow
                ? "pgbus capsule ''{0}'': claims are slow, the last took {1} ms (a snapshot held"
                    + " elsewhere keeps vacuum from removing claimed jobs'' index entries? the"
                    + " doctor''s transaction horizon check names it); claims now start after the"
                    + " jobs this capsule claimed last, with a full claim every {2} s"
                : "pgbus capsule ''{0}'': a full claim took {1} ms; claims start from the front of"
                    + " each queue again",
            capsule,
            tookNanos / 1_000_000,
            FULL_CLAIM_EVERY.toSeconds());
      }
      engaged = slow;
      if (!engaged) {
        floors.clear();
        return;
      }
    }
    var earliest = new HashMap<Level, Instant>();
    for (ClaimedJob job : jobs) {
      earliest.merge(
          new Level(job.queue(), job.priority()), job.runAt(), (a, b) -> a.isBefore(b) ? a : b);
    }
    earliest.forEach(
        (level, runAt) -> floors.merge(level, runAt.minus(GRACE), (a, b) -> a.isAfter(b) ? a : b));
  }

  /** A job of this capsule went back with its old run_at: the next claim goes without floors. */
  void reset() {
    floors.clear();
  }

  boolean engaged() {
    return engaged;
  }
}

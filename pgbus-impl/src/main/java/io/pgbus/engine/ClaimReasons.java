package io.pgbus.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Why a capsule's loop should claim: a wake for one of its queues (a NOTIFY, or the ticker's poll),
 * a backlog (its last claim filled every slot it asked for, so more is likely waiting), or a due
 * time reached (the alarm). Without one of them the loop sleeps: an idle capsule issues no
 * statement. A reason is spent by the claim it causes ({@link #take}).
 *
 * <p>The alarm is the earliest due time known from wakes, claims and the jobs this JVM ran; an
 * alarm that rang early (this JVM's clock ahead of the database's) finds nothing, so a claim that
 * the alarm or a resync caused reads the next due time from the database again ({@link
 * Take#CLAIM_AND_READ_DUE}) instead of dropping it.
 *
 * <p>The alarm holds one time, the earliest: a later due time learnt meanwhile (a second retry
 * decided here, a wake for a later job) is folded into it and known again only from the database.
 * So once the alarm rang, or a resync asked, the due times stay unread until a claim actually read
 * them, which only a claim that left slots free does ({@link Claimer}): a claim that the alarm
 * filled hands the read on to the backlog claims after it. Spent with the ringing claim instead, a
 * retry due a moment after the one that rang waited for the poll ceiling (issue #29, item 6).
 *
 * <p>A wake also sets the tail: one more claim {@link #TAIL} after the claim that the first wake of
 * a burst caused. The SQL enqueue paths coalesce their wakes (pgbus.wake_coalesced, V27): a commit
 * within the window after another's wake for the queue sends none, and the tail claim finds its
 * job.
 *
 * <p>Not thread-safe: the capsule guards it with the lock of its signal.
 */
final class ClaimReasons {

  /**
   * How long after a wake's claim the tail claim comes: the SQL path's coalescing window (2 ms, in
   * pgbus.wake_coalesced) and a margin for the commit of a transaction that skipped its wake within
   * that window, whose WAL flush may take a few milliseconds on a slow disk (docs/architecture.md,
   * "The SQL path").
   */
  static final Duration TAIL = Duration.ofMillis(20);

  /** What {@link #take} decides. */
  enum Take {
    /** No reason, or no free slot: sleep. */
    WAIT,
    /** Claim. */
    CLAIM,
    /**
     * Claim, and when the claim leaves slots free, read the queues' next due time for the alarm.
     */
    CLAIM_AND_READ_DUE
  }

  // The first claim after start reads the due times: nothing is known yet.
  private boolean woken = true;
  private boolean readDue = true; // the due times are unread since the alarm rang or a resync
  private boolean backlog;
  private Instant alarm;
  private Instant tail;
  // A wake asked for a tail: it is set TAIL after the claim the wake causes, not after the wake,
  // since a busy capsule may claim later than it heard the wake.
  private boolean tailAfterClaim;

  /** A wake, heard at {@code now}, that concerns the capsule that reads {@code queues}. */
  void wake(Wake wake, List<String> queues, Instant now) {
    if (wake.everyone()) {
      resyncNow();
    }
    for (String q : queues) {
      if (wake.now().contains(q)) {
        woken = true;
      }
      Instant due = wake.later().get(q);
      if (due != null) {
        alarm = earliest(alarm, due);
      }
      if (tail == null && wake.now().contains(q)) {
        tailAfterClaim = true;
      } else if (tail == null && due != null) {
        tail = now.plus(TAIL); // no claim follows a wake for later: the tail reads the due times
      }
    }
  }

  /** Claim again and re-read the due times: after a failed round, or jobs handed back. */
  void resyncNow() {
    woken = true;
    readDue = true;
  }

  /** Claim again: a job of a limited queue finished, so the limit may let another through. */
  void wakeUp() {
    woken = true;
  }

  /** A job of ours will be due at {@code due} (a retry or a snooze decided in this JVM). */
  void dueAt(Instant due) {
    alarm = earliest(alarm, due);
  }

  /**
   * Whether to claim now for {@code free} slots; a claim spends every reason, and the alarm when it
   * rang.
   */
  Take take(Instant now, int free) {
    boolean alarmRang = alarm != null && !now.isBefore(alarm);
    boolean tailRang = tail != null && !now.isBefore(tail);
    if (free <= 0 || !(woken || backlog || alarmRang || tailRang)) {
      return Take.WAIT;
    }
    if (alarmRang) {
      alarm = null;
      readDue = true;
    }
    if (tailRang) {
      tail = null;
      readDue = true; // the tail reads the due times too: a later job whose wake was coalesced
    }
    woken = false;
    backlog = false;
    if (tailAfterClaim && tail == null) {
      tail = now.plus(TAIL);
    }
    tailAfterClaim = false;
    return readDue ? Take.CLAIM_AND_READ_DUE : Take.CLAIM;
  }

  /**
   * A claim returned: {@code full} when it took all it asked for (a backlog), and the next due time
   * it read, or null. A claim that left slots free read the due times if it was asked to.
   */
  void claimed(boolean full, Instant nextDue) {
    backlog = full;
    if (!full) {
      readDue =
          false; // a claim that asked to read them did (Claimer.claim); one that did not, had no
      // need
    }
    if (nextDue != null) {
      alarm = earliest(alarm, nextDue);
    }
  }

  /**
   * How long to sleep from {@code now}: until the alarm or the tail while slots are free, at most
   * {@code max}.
   */
  long sleepNanos(Instant now, int free, long max) {
    return free > 0 ? nanosUntil(now, earliest(alarm, tail), max) : max;
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

  /** The earlier of two times, either of which may be null (none). */
  static Instant earliest(Instant a, Instant b) {
    return a == null || (b != null && b.isBefore(a)) ? b : a;
  }
}

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
 * <p>Not thread-safe: the capsule guards it with the lock of its signal.
 */
final class ClaimReasons {

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

  /** A wake that concerns the capsule that reads {@code queues}. */
  void wake(Wake wake, List<String> queues) {
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
    if (free <= 0 || !(woken || backlog || alarmRang)) {
      return Take.WAIT;
    }
    if (alarmRang) {
      alarm = null;
      readDue = true;
    }
    woken = false;
    backlog = false;
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
   * How long to sleep from {@code now}: until the alarm while slots are free, at most {@code max}.
   */
  long sleepNanos(Instant now, int free, long max) {
    return free > 0 ? nanosUntil(now, alarm, max) : max;
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

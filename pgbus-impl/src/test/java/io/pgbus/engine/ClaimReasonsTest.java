package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.ClaimReasons.Take;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Why a capsule claims: each reason causes one claim, and an idle capsule has none. */
class ClaimReasonsTest {

  private static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
  private static final List<String> QUEUES = List.of("a", "b");
  private static final long MAX = 5_000_000_000L;

  /** Reasons past the first claim after start, which always claims and reads the due times. */
  private static ClaimReasons started() {
    var r = new ClaimReasons();
    assertThat(r.take(NOW, 1)).as("the first claim").isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.claimed(false, null);
    return r;
  }

  @Test
  void anIdleCapsuleHasNoReasonAndSleepsTheLongestSleep() {
    var r = started();
    assertThat(r.take(NOW, 2)).isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(NOW, 2, MAX)).isEqualTo(MAX);
  }

  @Test
  void aWakeForOneOfItsQueuesIsOneClaimAndOtherQueuesAreNone() {
    var r = started();
    r.wake(new Wake(Set.of("other"), Map.of(), false), QUEUES, NOW);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.WAIT);
    r.wake(new Wake(Set.of("b"), Map.of(), false), QUEUES, NOW);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM);
    assertThat(r.take(NOW, 1)).as("the reason is spent").isEqualTo(Take.WAIT);
  }

  @Test
  void withoutAFreeSlotAReasonWaitsAndIsKept() {
    var r = started();
    r.wakeUp();
    assertThat(r.take(NOW, 0)).isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(NOW, 0, MAX)).isEqualTo(MAX);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM);
  }

  @Test
  void aFullClaimIsABacklogThatClaimsAgain() {
    var r = started();
    r.wakeUp();
    r.take(NOW, 1);
    r.claimed(true, null);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM);
    r.claimed(false, null);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.WAIT);
  }

  @Test
  void theEarliestDueTimeRingsOnceAndMakesTheClaimReadTheDueTimesAgain() {
    var r = started();
    // Heard a second ago: its tail claim, which reads the due times, is spent first.
    r.wake(
        new Wake(Set.of(), Map.of("a", NOW.plusSeconds(10)), false), QUEUES, NOW.minusSeconds(1));
    assertThat(r.take(NOW.minusSeconds(1).plus(ClaimReasons.TAIL), 1))
        .isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.dueAt(NOW.plusSeconds(3));
    r.claimed(false, NOW.plusSeconds(20));
    assertThat(r.take(NOW, 1)).isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(NOW, 1, MAX)).isEqualTo(3_000_000_000L);
    assertThat(r.take(NOW.plusSeconds(3), 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    assertThat(r.take(NOW.plusSeconds(4), 1)).as("the alarm is spent").isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(NOW.plusSeconds(4), 1, MAX)).isEqualTo(MAX);
  }

  @Test
  void anAlarmThatRingsIntoAFullClaimLeavesTheDueTimesForTheNextClaimToRead() {
    var r = started();
    r.dueAt(NOW.plusSeconds(3));
    r.dueAt(NOW.plusSeconds(4)); // a second retry: folded into the alarm at 3 s
    assertThat(r.take(NOW.plusSeconds(3), 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.claimed(true, null); // one slot, one job: a full claim, which read no due time
    assertThat(r.take(NOW.plusSeconds(3), 1))
        .as("the backlog claim after it reads the due times")
        .isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.claimed(false, NOW.plusSeconds(4));
    assertThat(r.sleepNanos(NOW.plusSeconds(3), 1, MAX)).isEqualTo(1_000_000_000L);
    assertThat(r.take(NOW.plusSeconds(4), 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.claimed(false, null);
    assertThat(r.take(NOW.plusSeconds(4), 1)).as("read: spent").isEqualTo(Take.WAIT);
    r.wakeUp();
    assertThat(r.take(NOW.plusSeconds(4), 1)).isEqualTo(Take.CLAIM);
  }

  @Test
  void aWakeForEveryoneAndAResyncReadTheDueTimes() {
    var r = started();
    r.wake(new Wake(Set.of(), Map.of(), true), QUEUES, NOW);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.resyncNow();
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.WAIT);
  }

  @Test
  void aWakesClaimIsFollowedByOneTailClaimThatReadsTheDueTimes() {
    var r = started();
    r.wake(new Wake(Set.of("a"), Map.of(), false), QUEUES, NOW);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.CLAIM);
    r.claimed(false, null);
    assertThat(r.take(NOW, 1)).isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(NOW, 1, MAX)).isEqualTo(ClaimReasons.TAIL.toNanos());

    Instant tail = NOW.plus(ClaimReasons.TAIL);
    assertThat(r.take(tail, 1)).as("the tail claim").isEqualTo(Take.CLAIM_AND_READ_DUE);
    r.claimed(false, null);
    assertThat(r.take(tail, 1)).as("the tail is spent").isEqualTo(Take.WAIT);
    assertThat(r.sleepNanos(tail, 1, MAX)).isEqualTo(MAX);
  }

  @Test
  void aBurstOfWakesGetsOneTailClaimAfterItsFirstWake() {
    var r = started();
    r.wake(new Wake(Set.of(), Map.of("b", NOW.plusSeconds(60)), false), QUEUES, NOW);
    r.take(NOW, 1);
    r.wake(new Wake(Set.of("a"), Map.of(), false), QUEUES, NOW.plusMillis(5));
    assertThat(r.take(NOW.plusMillis(5), 1)).isEqualTo(Take.CLAIM);

    assertThat(r.sleepNanos(NOW.plusMillis(5), 1, MAX))
        .as("not moved by the second wake")
        .isEqualTo(ClaimReasons.TAIL.minusMillis(5).toNanos());
    assertThat(r.take(NOW.plus(ClaimReasons.TAIL), 1)).isEqualTo(Take.CLAIM_AND_READ_DUE);
    assertThat(r.take(NOW.plus(ClaimReasons.TAIL), 1)).isEqualTo(Take.WAIT);
  }

  @Test
  void aWakeForOtherQueuesOrForEveryoneSetsNoTail() {
    var r = started();
    r.wake(new Wake(Set.of("other"), Map.of("other", NOW), false), QUEUES, NOW);
    r.wake(new Wake(Set.of(), Map.of(), true), QUEUES, NOW);
    assertThat(r.take(NOW, 1)).as("the resync").isEqualTo(Take.CLAIM_AND_READ_DUE);
    assertThat(r.sleepNanos(NOW, 1, MAX)).isEqualTo(MAX);
  }

  @Test
  void earliestTakesEitherNull() {
    assertThat(ClaimReasons.earliest(null, NOW)).isEqualTo(NOW);
    assertThat(ClaimReasons.earliest(NOW, null)).isEqualTo(NOW);
    assertThat(ClaimReasons.earliest(NOW.plusSeconds(1), NOW)).isEqualTo(NOW);
    assertThat(ClaimReasons.earliest(null, null)).isNull();
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A capsule's slots, with the clock passed in: busy from the claim until the last job is done. */
class SlotsTest {

  private static final long S = 1_000_000_000L;

  private final Slots slots = new Slots("test", 2, ". Give it more");

  @Test
  void aClaimFillsSlotsAndTheirDoneFreesThem() {
    var first = List.of(job(1), job(2));
    var second = List.of(job(3));
    assertThat(slots.free()).isEqualTo(2);

    slots.filled(List.of(first, second), 0);
    assertThat(slots.busy()).isEqualTo(2);
    assertThat(slots.free()).isZero();
    assertThat(slots.held()).extracting(ClaimedJob::id).containsExactly(1L, 2L, 3L);

    slots.started(first.get(0), S);
    slots.done(first);
    assertThat(slots.busy()).isEqualTo(1);
    assertThat(slots.held()).extracting(ClaimedJob::id).containsExactly(3L);
    slots.done(second); // handed back before it started
    assertThat(slots.free()).isEqualTo(2);
    assertThat(slots.held()).isEmpty();
    assertThat(slots.oldestWait(10 * S)).isZero();
  }

  @Test
  void aSlotWaitsForAThreadFromItsClaimUntilItStarts() {
    slots.filled(List.of(List.of(job(1)), List.of(job(2))), 0);
    slots.started(job(2), 3 * S);
    assertThat(slots.oldestWait(5 * S)).isEqualTo(5 * S);
    slots.started(job(1), 6 * S);
    assertThat(slots.oldestWait(7 * S)).isZero();
  }

  @Test
  void onlyEverySlotPastTheTimeoutIsStuckCountedFromTheYoungest() {
    Duration timeout = Duration.ofSeconds(10);
    slots.filled(List.of(List.of(job(1)), List.of(job(2))), 0);
    slots.started(job(1), 0);
    assertThat(slots.allStuckFor(100 * S, timeout)).as("one slot of two").isZero();
    slots.started(job(2), 5 * S);
    assertThat(slots.allStuckFor(12 * S, timeout)).as("within it").isNegative();
    assertThat(slots.allStuckFor(20 * S, timeout)).isEqualTo(5 * S);
    slots.handlerStarting(job(2), 18 * S); // the slot's next job started
    assertThat(slots.allStuckFor(20 * S, timeout)).isNegative();
  }

  @Test
  void aStarvedExecutorIsReportedOncePerEpisode() {
    long warn = Slots.STARVATION_WARNING_NANOS;
    slots.filled(List.of(List.of(job(1))), 0);
    assertThat(slots.warnIfStarving(warn - 1)).isFalse();
    assertThat(slots.warnIfStarving(warn)).isTrue();
    assertThat(slots.warnIfStarving(2 * warn)).as("the same episode").isFalse();
    slots.started(job(1), 2 * warn);
    slots.done(List.of(job(1)));
    assertThat(slots.warnIfStarving(2 * warn)).isFalse();
    slots.filled(List.of(List.of(job(2))), 3 * warn);
    assertThat(slots.warnIfStarving(4 * warn)).as("a new episode").isTrue();
  }

  private static ClaimedJob job(long id) {
    return new ClaimedJob(id, "q", 0, "{}", 1, 3, Instant.EPOCH, Instant.EPOCH, null, 0);
  }
}

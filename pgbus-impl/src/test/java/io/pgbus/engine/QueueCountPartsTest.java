package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.JobAdminStore.Count;
import org.junit.jupiter.api.Test;

/**
 * How the queue list combines a (queue, state)'s parts (JobAdminStore.COUNTS): the live table's
 * estimate or capped count, the history's default partition read to the cap, and the day
 * partitions' kept counts (exact once every day is counted, else a capped read). A part read to the
 * cap makes the sum a lower bound, marked capped; an estimate is marked estimated.
 */
class QueueCountPartsTest {

  private static final long CAP = 1_000;

  @Test
  void countedPartsUnderTheCapAddUpExactly() {
    assertThat(Count.of(40, 37L, 5, 2_000_000, true, CAP))
        .isEqualTo(new Count(37 + 5 + 2_000_000, false, false));
  }

  @Test
  void aLiveCountPastTheCapThatTheStatisticsHadSmallIsALowerBound() {
    assertThat(Count.of(40, CAP + 1, 3, 10, true, CAP))
        .isEqualTo(new Count(CAP + 3 + 10, true, false));
    assertThat(Count.of(40, 12L, CAP + 1, 10, true, CAP))
        .isEqualTo(new Count(12 + CAP + 10, true, false));
  }

  @Test
  void anEstimateAddsTheOtherPartsAndIsMarkedEstimated() {
    assertThat(Count.of(50_000, null, 7, 300, true, CAP))
        .isEqualTo(new Count(50_000 + 7 + 300, false, true));
    assertThat(Count.of(50_000, null, CAP + 1, 300, true, CAP))
        .as("the default partition read to the cap")
        .isEqualTo(new Count(50_000 + CAP + 300, true, true));
  }

  @Test
  void anEstimateBesideAHistoryReadToTheCapIsALowerBound() {
    // A day partition not yet counted: the history is read whole, at most to the cap.
    assertThat(Count.of(50_000, null, 0, CAP + 1, false, CAP))
        .isEqualTo(new Count(50_000 + CAP, true, true));
    assertThat(Count.of(50_000, null, 0, 20, false, CAP))
        .isEqualTo(new Count(50_000 + 20, false, true));
  }

  @Test
  void aCountedLiveTableBesideAHistoryReadToTheCapStopsAtTheCap() {
    assertThat(Count.of(40, 30L, 0, CAP + 1, false, CAP)).isEqualTo(new Count(CAP, true, false));
    assertThat(Count.of(40, 30L, 0, 20, false, CAP)).isEqualTo(new Count(50, false, false));
  }
}

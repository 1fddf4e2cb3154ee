package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The bounded memory of cancel requests heard before their handler started (issue #23). */
class EarlyCancelsTest {

  @Test
  void pastItsBoundItForgetsTheLeastRecentlyHeardAndKeepsTheMostRecent() {
    var early = new EarlyCancels();
    for (long id = 1; id <= EarlyCancels.MAX + 100; id++) {
      early.heard(new CancelRequest(id, 1));
    }

    assertThat(early.size()).isEqualTo(EarlyCancels.MAX);
    assertThat(early.contains(100, 1)).as("among the oldest").isFalse();
    assertThat(early.contains(101, 1)).isTrue();
    assertThat(early.contains(EarlyCancels.MAX + 100, 1)).as("the last heard").isTrue();
    assertThat(early.take(EarlyCancels.MAX + 100, 1)).isTrue();
    assertThat(early.take(EarlyCancels.MAX + 100, 1)).as("taken once").isFalse();
  }

  @Test
  void aRequestHeardAgainCountsAsHeardLast() {
    var early = new EarlyCancels(3);
    early.heard(new CancelRequest(1, 1));
    early.heard(new CancelRequest(2, 1));
    early.heard(new CancelRequest(3, 1));
    early.heard(new CancelRequest(1, 1));
    early.heard(new CancelRequest(4, 1));

    assertThat(early.contains(2, 1)).isFalse();
    assertThat(early.contains(1, 1)).isTrue();
    assertThat(early.contains(3, 1)).isTrue();
    assertThat(early.contains(4, 1)).isTrue();
  }

  @Test
  void onlyTheAttemptThatWasHeardIsTaken() {
    var early = new EarlyCancels();
    early.heard(new CancelRequest(7, 2));

    assertThat(early.take(7, 1)).isFalse();
    assertThat(early.take(7, 2)).isTrue();
  }
}

package io.pgbus.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The demo's request parameters are bounded, and a value out of bounds says what is allowed. */
class RequestLimitsTest {

  @Test
  void aCountAboveAThousandIsRefused() {
    assertThatThrownBy(() -> RequestLimits.count("20000"))
        .isInstanceOf(RequestLimits.InvalidRequestException.class)
        .hasMessage("count=20000 is invalid: use a whole number from 1 to 1000");
    assertThatThrownBy(() -> RequestLimits.count("2147483648"))
        .hasMessageStartingWith("count=2147483648 is invalid");
    assertThatThrownBy(() -> RequestLimits.count("0")).hasMessageStartingWith("count=0 is invalid");
    assertThat(RequestLimits.count("1000")).isEqualTo(1000);
  }

  @Test
  void aDelayBeyondAWeekAndAVeryLongNameAreRefused() {
    assertThatThrownBy(() -> RequestLimits.delaySeconds("2147483647"))
        .hasMessage("delaySeconds=2147483647 is invalid: use a whole number from 0 to 604800");
    assertThatThrownBy(() -> RequestLimits.name("x".repeat(201)))
        .hasMessage("name is 201 characters long: use at most 200");
    assertThat(RequestLimits.name("Ada")).isEqualTo("Ada");
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The payload of "pgbus-cancel" is untrusted: only the exact shape pgbus sends is read. */
class CancelRequestTest {

  @Test
  void theShapePgbusSendsIsRead() {
    assertThat(CancelRequest.parse("42:3")).isEqualTo(new CancelRequest(42, 3));
    assertThat(CancelRequest.parse(Long.MAX_VALUE + ":" + Integer.MAX_VALUE))
        .isEqualTo(new CancelRequest(Long.MAX_VALUE, Integer.MAX_VALUE));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        ":",
        "42",
        "42:",
        ":3",
        "42:3:1",
        "-42:3",
        "42:-3",
        "+42:3",
        "042:3",
        "42:03",
        "0:1",
        "42:0",
        " 42:3",
        "42:3 ",
        "42:3\n",
        "４２:3",
        "9223372036854775808:1",
        "42:2147483648",
        "42:99999999999"
      })
  void anythingElseIsDropped(String payload) {
    assertThat(CancelRequest.parse(payload)).isNull();
  }

  @Test
  void aLongPayloadIsDroppedBeforeItIsMatched() {
    assertThat(CancelRequest.parse("1".repeat(7999))).isNull();
    assertThat(CancelRequest.parse(null)).isNull();
  }
}

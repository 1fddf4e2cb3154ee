package io.pgbus.jakarta.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The admin API's bounded body read (issue #23: a 50 MB body was read in full, then refused). */
class RequestBodyTest {

  /** An endless body that counts what was read of it. */
  private static final class Endless extends InputStream {
    long read;

    @Override
    public int read() {
      read++;
      return 'x';
    }

    @Override
    public int read(byte[] b, int off, int len) {
      java.util.Arrays.fill(b, off, off + len, (byte) 'x');
      read += len;
      return len;
    }
  }

  @Test
  void aDeclaredLengthOverTheMaximumIsRefusedBeforeAnyByteIsRead() {
    Endless body = new Endless();
    assertThatThrownBy(() -> RequestBody.read("52428800", body))
        .isInstanceOf(RequestBody.TooLarge.class)
        .hasMessageContaining("52428800 bytes")
        .hasMessageContaining("262144");
    assertThat(body.read).isZero();
  }

  @Test
  void aBodyWithoutALengthIsReadNoFurtherThanOneBytePastTheMaximum() {
    Endless body = new Endless();
    assertThatThrownBy(() -> RequestBody.read(null, body))
        .isInstanceOf(RequestBody.TooLarge.class)
        .hasMessageContaining("more than 262144 bytes");
    assertThat(body.read).isEqualTo(RequestBody.MAX_BYTES + 1);
    // A lying Content-Length changes nothing.
    Endless lying = new Endless();
    assertThatThrownBy(() -> RequestBody.read("10", lying))
        .isInstanceOf(RequestBody.TooLarge.class);
    assertThat(lying.read).isEqualTo(RequestBody.MAX_BYTES + 1);
  }

  @Test
  void aBodyAtTheMaximumIsReadAsUtf8() {
    byte[] bytes = "é".repeat(RequestBody.MAX_BYTES / 2).getBytes(StandardCharsets.UTF_8);
    assertThat(RequestBody.read(String.valueOf(bytes.length), new ByteArrayInputStream(bytes)))
        .hasSize(RequestBody.MAX_BYTES / 2);
  }
}

package io.pgbus.jakarta.admin;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * The body of an admin API request, read with a bound: a declared {@code Content-Length} over
 * {@value #MAX_BYTES} bytes is refused before a byte is read, and a body without one is read to at
 * most one byte past the bound (issue #23: a 50 MB body used to be read in full, then refused).
 */
final class RequestBody {

  /** The largest body the admin API reads: a schedule's 64 KiB payload and its fields, in UTF-8. */
  static final int MAX_BYTES = 262_144;

  private RequestBody() {}

  /** A body over {@link #MAX_BYTES}; the admin API answers it with a 413. */
  static final class TooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    TooLarge(String size) {
      super(
          "the request body has "
              + size
              + ", more than the "
              + MAX_BYTES
              + " bytes the admin API reads: send a smaller body");
    }
  }

  /**
   * Reads the body as UTF-8.
   *
   * @param contentLength the request's Content-Length header, or null
   * @throws TooLarge when it declares or holds more than {@link #MAX_BYTES} bytes
   */
  static String read(String contentLength, InputStream in) {
    if (contentLength != null) {
      try {
        long declared = Long.parseLong(contentLength.strip());
        if (declared > MAX_BYTES) {
          throw new TooLarge(declared + " bytes");
        }
      } catch (NumberFormatException e) {
        // Not a length the container would have accepted; the bounded read below still holds.
      }
    }
    if (in == null) {
      return "";
    }
    try {
      byte[] bytes = in.readNBytes(MAX_BYTES + 1);
      if (bytes.length > MAX_BYTES) {
        throw new TooLarge("more than " + MAX_BYTES + " bytes");
      }
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("read the request body: " + e.getMessage(), e);
    }
  }
}

package io.pgbus.engine;

import java.util.regex.Pattern;

/**
 * A request to cancel one running attempt of a job, as heard on the {@value Channels#CANCEL}
 * channel. The payload is untrusted input (any login may NOTIFY any channel), so {@link #parse}
 * accepts only {@code <id>:<attempt>} in plain decimal, and the engine still checks the request
 * against the database before it interrupts anything.
 *
 * @param id the job
 * @param attempt the attempt to stop; another attempt of the same job is left alone
 */
public record CancelRequest(long id, int attempt) {

  /** The longest payload a real request has: 19 digits, ':', 10 digits. */
  static final int MAX_PAYLOAD = 30;

  private static final Pattern SHAPE = Pattern.compile("[1-9][0-9]{0,18}:[1-9][0-9]{0,9}");

  /** The request a payload carries, or null for anything that is not exactly one. */
  public static CancelRequest parse(String payload) {
    if (payload == null || payload.length() > MAX_PAYLOAD || !SHAPE.matcher(payload).matches()) {
      return null;
    }
    int colon = payload.indexOf(':');
    try {
      return new CancelRequest(
          Long.parseLong(payload, 0, colon, 10),
          Integer.parseInt(payload, colon + 1, payload.length(), 10));
    } catch (NumberFormatException e) {
      return null; // 19 digits over Long.MAX_VALUE, 10 over Integer.MAX_VALUE
    }
  }
}

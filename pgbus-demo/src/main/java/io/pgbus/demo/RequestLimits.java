package io.pgbus.demo;

/**
 * The bounds of the demo's request parameters. One request must not be able to enqueue millions of
 * jobs (count=2147483647 would try 2^31), park jobs for centuries, or send a megabyte name.
 */
final class RequestLimits {

  static final int MAX_COUNT = 1000;
  static final int MAX_DELAY_SECONDS = 7 * 24 * 3600;
  static final int MAX_NAME_LENGTH = 200;

  /** A request parameter out of bounds: answered with 400 and this message. */
  static final class InvalidRequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InvalidRequestException(String message) {
      super(message);
    }
  }

  private RequestLimits() {}

  static int count(String text) {
    return whole("count", text, 1, MAX_COUNT);
  }

  static int delaySeconds(String text) {
    return whole("delaySeconds", text, 0, MAX_DELAY_SECONDS);
  }

  static String name(String name) {
    if (name.length() > MAX_NAME_LENGTH) {
      throw new InvalidRequestException(
          "name is " + name.length() + " characters long: use at most " + MAX_NAME_LENGTH);
    }
    return name;
  }

  private static int whole(String parameter, String text, int min, int max) {
    try {
      int n = Integer.parseInt(text.strip());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new InvalidRequestException(
        parameter + "=" + text + " is invalid: use a whole number from " + min + " to " + max);
  }
}

package io.pgbus.jakarta;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations written as {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 14d} or ISO-8601. */
final class Durations {
  private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");

  private Durations() {}

  /** Returns the duration, or null when the text is not one. */
  static Duration parse(String text) {
    String t = text.strip().toLowerCase(java.util.Locale.ROOT);
    Matcher m = SHORT.matcher(t);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        default -> Duration.ofDays(n);
      };
    }
    try {
      return Duration.parse(text.strip().toUpperCase(java.util.Locale.ROOT));
    } catch (DateTimeParseException e) {
      return null;
    }
  }
}

package io.pgbus.engine;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Parses durations written as {@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 14d} or
 * ISO-8601.
 */
public final class Durations {
  private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)");

  private Durations() {}

  /** Returns the duration, or null when the text is not one. */
  public static Duration parse(String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    Matcher m = SHORT.matcher(t);
    try {
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
      return Duration.parse(text.strip().toUpperCase(Locale.ROOT));
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      return null; // unreadable, or too long for a Duration: refused by the caller
    }
  }

  /** The duration in the shortest form {@link #parse} reads back: 500ms, 30s, 5m, 2h, 14d. */
  public static String format(Duration d) {
    long ms = d.toMillis();
    if (ms == 0) {
      return "0";
    }
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1_000L};
    String[] units = {"d", "h", "m", "s"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms % sizes[i] == 0) {
        return ms / sizes[i] + units[i];
      }
    }
    return ms + "ms";
  }
}

package io.pgbus.engine.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;

/**
 * Numbers a fault test measured on its way (time to degrade, to recover, to rescue...), printed
 * with a {@code [measure]} prefix and appended to {@code target/fault-measurements.txt}, so that
 * docs/operations.md can quote a real run. Measuring never fails a test.
 */
public final class Measurements {

  private static final Path FILE = Path.of("target", "fault-measurements.txt");

  private Measurements() {}

  /** Records a duration in milliseconds. */
  public static void record(String what, Duration d) {
    record(what, d.toMillis() + " ms");
  }

  /** Records any value. */
  public static void record(String what, Object value) {
    String line = "[measure] " + what + " = " + value;
    System.out.println(line);
    try {
      if (Files.isDirectory(FILE.getParent())) {
        Files.writeString(
            FILE,
            Instant.now() + " " + line + System.lineSeparator(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      }
    } catch (IOException ignored) {
      // only a record; the line above was printed
    }
  }

  /** The time since {@code startNanos} (a {@link System#nanoTime()}). */
  public static Duration since(long startNanos) {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}

package io.pgbus.engine;

import java.net.InetAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Worker ids, the names in {@code attempted_by}: the default (host and process id, so an operator
 * can find the JVM) and the bound on a configured one.
 */
final class WorkerIds {
  /** The longest worker id, as pgbus.claim checks it. */
  static final int MAX_LENGTH = 255;

  static final String KEY = "pgbus.worker-id";

  private WorkerIds() {}

  /**
   * Refuses a worker id that is empty, longer than {@value #MAX_LENGTH} characters or holds a
   * control character: it is written to job rows, logs and the console, where a newline would forge
   * a line.
   *
   * @throws InvalidConfigException naming {@value #KEY}, the value (escaped) and the rule
   */
  static String check(String id) {
    String problem = null;
    if (id == null || id.isEmpty()) {
      problem = "it is empty";
    } else if (id.length() > MAX_LENGTH) {
      problem = "it has " + id.length() + " characters";
    } else {
      for (int i = 0; i < id.length(); i++) {
        char ch = id.charAt(i);
        if (Character.isISOControl(ch) || ch == '\u2028' || ch == '\u2029') {
          problem = String.format("it holds the control character U+%04X at %d", (int) ch, i);
          break;
        }
      }
    }
    if (problem == null) {
      return id;
    }
    String shown = id == null ? "" : escaped(id.length() > 80 ? id.substring(0, 80) + "..." : id);
    String rule =
        problem + ": use 1 to " + MAX_LENGTH + " characters without control characters (newlines)";
    throw new InvalidConfigException(
        KEY, KEY + "=" + shown + " is invalid: " + rule, "worker id '" + shown + "': " + rule);
  }

  private static String escaped(String s) {
    var b = new StringBuilder();
    for (char ch : s.toCharArray()) {
      if (Character.isISOControl(ch) || ch == '\u2028' || ch == '\u2029') {
        b.append(String.format("\\u%04x", (int) ch));
      } else {
        b.append(ch);
      }
    }
    return b.toString();
  }

  static String local() {
    // The suffix keeps two engines in one JVM (tests, benchmarks) apart.
    return host()
        + ":"
        + ProcessHandle.current().pid()
        + ":"
        + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
  }

  /** This machine's host name, or "unknown-host". */
  static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      return "unknown-host";
    }
  }
}

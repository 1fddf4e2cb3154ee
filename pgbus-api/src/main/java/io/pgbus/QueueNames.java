package io.pgbus;

import java.util.regex.Pattern;

/**
 * The rule every queue name follows. Queue names become PostgreSQL channel names ({@code
 * pgbus_<queue>}), so they must be plain identifiers that fit PostgreSQL's 63-byte limit with room
 * for the prefix.
 */
public final class QueueNames {

  /** The longest allowed queue name, in characters. */
  public static final int MAX_LENGTH = 48;

  private static final Pattern VALID = Pattern.compile("[a-z][a-z0-9_]*");

  private static final String RULE =
      "use a lower-case letter followed by lower-case letters, digits or '_', at most "
          + MAX_LENGTH
          + " characters (for example 'emails' or 'billing_v2')";

  private QueueNames() {}

  /**
   * Returns the name unchanged when it is valid.
   *
   * @throws InvalidJobException naming the bad value and the rule, when it is not
   */
  public static String require(String queue) {
    if (queue == null) {
      throw new InvalidJobException(null, "queue name must not be null: " + RULE);
    }
    if (queue.length() > MAX_LENGTH || !VALID.matcher(queue).matches()) {
      throw new InvalidJobException(
          queue, "invalid queue name '" + printable(queue) + "': " + RULE);
    }
    return queue;
  }

  private static String printable(String s) {
    String shown = s.length() > 80 ? s.substring(0, 80) + "...(" + s.length() + " chars)" : s;
    return shown.replace("\n", "\\n").replace("\r", "\\r");
  }
}

package io.pgbus.engine;

import java.util.Objects;

/**
 * A configuration value the engine refuses, as a value: the key the user wrote, and the message in
 * the words of the configuration ({@link #keyedMessage}). The Jakarta adapter reports that message
 * as it is; it never parses {@link #getMessage}.
 */
public final class InvalidConfigException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  private final String key;
  private final String keyedMessage;

  /** A refusal whose message already names the key(s). */
  public InvalidConfigException(String key, String keyedMessage) {
    this(key, keyedMessage, keyedMessage);
  }

  /**
   * A refusal with a message for Java callers ({@code message}) and one in configuration words
   * ({@code keyedMessage}).
   */
  public InvalidConfigException(String key, String keyedMessage, String message) {
    super(message);
    this.key = Objects.requireNonNull(key, "key");
    this.keyedMessage = Objects.requireNonNull(keyedMessage, "keyedMessage");
  }

  /** The key at fault, e.g. {@code pgbus.poll-interval} or {@code pgbus.cron.nightly.schedule}. */
  public String key() {
    return key;
  }

  /** What is wrong, naming the key as the user wrote it. */
  public String keyedMessage() {
    return keyedMessage;
  }
}

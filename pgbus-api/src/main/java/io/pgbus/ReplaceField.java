package io.pgbus;

import java.util.Locale;

/**
 * A field of a waiting job that an enqueue with the same unique key replaces in place ({@link
 * EnqueueOptions#replacing}).
 */
public enum ReplaceField {
  /** The payload: the last enqueue's wins. */
  PAYLOAD,
  /** The run time: the last enqueue's runAt or delay (now without either). */
  RUN_AT,
  /** The priority. */
  PRIORITY;

  /** The name in SQL ({@code pgbus.enqueue_unique}'s replace array). */
  public String sqlName() {
    return name().toLowerCase(Locale.ROOT);
  }
}

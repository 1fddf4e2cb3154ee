package io.pgbus;

/**
 * A job was refused before anything was written: a bad queue name, a null or oversized payload, or
 * an option out of range. The message names the bad value and how to fix it.
 */
public class InvalidJobException extends PgbusException {
  private static final long serialVersionUID = 1L;

  public InvalidJobException(String queue, String message) {
    super(queue, null, message, null);
  }
}

package io.pgbus.admin;

import io.pgbus.PgbusException;

/**
 * A job search ran past its statement timeout ({@link JobAdmin#SEARCH_TIMEOUT_MS}) and was
 * cancelled by the database: narrow it with a queue, a state or a shorter creation window. Nothing
 * was written; a search inside a caller's transaction leaves that transaction failed, like any SQL
 * error.
 */
public class SearchTimeoutException extends PgbusException {
  private static final long serialVersionUID = 1L;

  public SearchTimeoutException(String message, Throwable cause) {
    super(message, cause);
  }
}

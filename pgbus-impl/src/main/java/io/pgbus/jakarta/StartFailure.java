package io.pgbus.jakarta;

import io.pgbus.engine.DatabaseProblem;
import io.pgbus.engine.Schema;

/**
 * Why the runtime could not start the engine yet, as the public category readiness shows: the
 * schema was missing or outdated, a migration failed, or a connection problem ({@link
 * DatabaseProblem}).
 */
final class StartFailure extends Exception {
  private static final long serialVersionUID = 1L;

  private final String category;

  private StartFailure(String message, Throwable cause, String category) {
    super(message, cause);
    this.category = category;
  }

  /** The installed schema is not the one this build expects (null: none). */
  static StartFailure schemaMismatch(String version) {
    return new StartFailure(
        "the pgbus schema is at version "
            + version
            + " but this build expects "
            + Schema.EXPECTED_VERSION
            + "; set pgbus.migrate=true, or apply the migrations as the"
            + " schema owner (docs/operations.md, Security)",
        null,
        version == null ? DatabaseProblem.SCHEMA_MISSING : DatabaseProblem.SCHEMA_OUTDATED);
  }

  /**
   * Migrating failed. A connection problem keeps its own category; anything else (a failed
   * statement, no right to create the schema) is the migration's failure, and the log has Flyway's
   * full text.
   */
  static StartFailure migration(RuntimeException e) {
    String category = DatabaseProblem.of(e);
    boolean connecting =
        category.equals(DatabaseProblem.UNREACHABLE)
            || category.equals(DatabaseProblem.AUTHENTICATION)
            || category.equals(DatabaseProblem.NO_DATABASE);
    return new StartFailure(e.getMessage(), e, connecting ? category : DatabaseProblem.MIGRATION);
  }

  /** The public category of any failed start. */
  static String categoryOf(Exception e) {
    return e instanceof StartFailure f ? f.category : DatabaseProblem.of(e);
  }
}

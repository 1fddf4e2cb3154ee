package io.pgbus.jakarta;

import io.pgbus.engine.DatabaseProblem;
import io.pgbus.engine.SchemaWindow;

/**
 * Why the runtime could not start the engine yet, as the public category readiness shows: the
 * schema was missing, outdated or too new for this build, a migration failed, or a connection
 * problem ({@link DatabaseProblem}).
 */
final class StartFailure extends Exception {
  private static final long serialVersionUID = 1L;

  private final String category;

  private StartFailure(String message, Throwable cause, String category) {
    super(message, cause);
    this.category = category;
  }

  /** This build cannot run on the installed schema: missing, outdated, or too new. */
  static StartFailure outsideWindow(SchemaWindow window) {
    return new StartFailure(window.message(), null, window.problem());
  }

  /** The category readiness shows while the deploy gate blocks the start. */
  static final String DEPLOY_CHECK_FAILED = "deploy check failed";

  /** The deploy gate found what this build would break (pgbus.deploy-check=fail). */
  static StartFailure deployCheck(String findings) {
    return new StartFailure(
        "pgbus deploy check failed (pgbus.deploy-check=fail), the engine does not start: "
            + findings,
        null,
        DEPLOY_CHECK_FAILED);
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

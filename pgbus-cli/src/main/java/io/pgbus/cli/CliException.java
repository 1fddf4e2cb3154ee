package io.pgbus.cli;

/**
 * A failure the command line reports in one line and an exit code: {@link #USAGE} for bad input, a
 * usage error or a job that does not exist; {@link #FAILED} for a failed check or an unhealthy
 * database.
 */
final class CliException extends RuntimeException {

  /** A check failed, the database is unhealthy or unreachable. */
  static final int FAILED = 1;

  /** A usage error, bad input, or something named that does not exist. */
  static final int USAGE = 2;

  private final int exitCode;

  private CliException(int exitCode, String message) {
    super(message, null, false, false);
    this.exitCode = exitCode;
  }

  static CliException usage(String message) {
    return new CliException(USAGE, message);
  }

  static CliException failed(String message) {
    return new CliException(FAILED, message);
  }

  int exitCode() {
    return exitCode;
  }
}

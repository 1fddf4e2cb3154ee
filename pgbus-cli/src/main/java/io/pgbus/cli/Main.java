package io.pgbus.cli;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code java -jar pgbus-cli.jar <command> ...}: the pgbus command line. Exits 0 when the command
 * did what was asked, 1 when a check failed or the database is unhealthy or unreachable, 2 for a
 * usage error, bad input or a job that does not exist (docs/operations.md, "Command line").
 */
public final class Main {

  // Flyway logs each migration at INFO through JUL; the command prints its own summary. Held here:
  // JUL keeps loggers weakly, and a collected one loses its level.
  private static final Logger FLYWAY = Logger.getLogger("org.flywaydb");

  private Main() {}

  public static void main(String[] args) {
    FLYWAY.setLevel(Level.WARNING);
    System.exit(new Cli(Io.system(), System.getenv(), System.getProperties()).run(args));
  }
}

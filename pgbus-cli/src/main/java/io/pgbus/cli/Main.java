package io.pgbus.cli;

/**
 * {@code java -jar pgbus-cli.jar <command> ...}: the pgbus command line. Exits 0 when the command
 * did what was asked, 1 when a check failed or the database is unhealthy or unreachable, 2 for a
 * usage error, bad input or a job that does not exist (docs/operations.md, "Command line").
 */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    System.exit(new Cli(Io.system(), System.getenv(), System.getProperties()).run(args));
  }
}

package io.pgbus.cli;

import io.pgbus.jakarta.ServerSettings;

/** One run of a command: its arguments, where it prints, its configuration and its database. */
final class Invocation {

  private final Command command;
  private final Args args;
  private final Io io;
  private final Output out;
  private final CliConfig config;
  private Database database;
  private ServerSettings settings;

  Invocation(Command command, Args args, Io io, CliConfig config) {
    this.command = command;
    this.args = args;
    this.io = io;
    this.out = new Output(io, args.has("json"));
    this.config = config;
  }

  Command command() {
    return command;
  }

  Args args() {
    return args;
  }

  Output out() {
    return out;
  }

  /** The servers' settings, read and checked on first use. */
  ServerSettings settings() {
    if (settings == null) {
      settings = config.settings();
    }
    return settings;
  }

  /** The database, from the configured URL and credentials, on first use. */
  Database database() {
    if (database == null) {
      database = new Database(config.url(), config.user(), config.password(), config.schema());
    }
    return database;
  }

  /**
   * Goes on only with the operator's consent: {@code --yes}, or "yes" typed at the terminal.
   * Without a terminal and without {@code --yes} it refuses (exit 2): a pipeline must say so.
   *
   * @param what what is about to happen, as a clause: "replay up to 1000 dead jobs"
   */
  void confirm(String what) {
    if (args.has("yes")) {
      return;
    }
    if (!io.terminal()) {
      throw CliException.usage(
          "refusing to "
              + what
              + " without consent: stdin is not a terminal to ask at; add --yes to run it"
              + " unattended");
    }
    io.err().print("pgbus: " + what + "? Type yes to go on: ");
    io.err().flush();
    String answer = io.readLine();
    if (answer == null || !answer.strip().equalsIgnoreCase("yes")) {
      throw CliException.failed("not confirmed: nothing was changed");
    }
  }
}

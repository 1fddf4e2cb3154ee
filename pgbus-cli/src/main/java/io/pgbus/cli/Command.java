package io.pgbus.cli;

import java.sql.SQLException;
import java.util.Set;

/** One command of the command line: its name, its help, the flags it takes and what it does. */
interface Command {

  /** The word that selects it: {@code pgbus <name>}. */
  String name();

  /** One line for the command list. */
  String summary();

  /** How it is called, for usage errors: {@code pgbus explain <job id>}. */
  String usageLine();

  /** The text of {@code pgbus <name> --help} after the usage line: what it does, its flags. */
  String help();

  /** Its flags that take a value, without {@code --}. */
  default Set<String> valueFlags() {
    return Set.of();
  }

  /** Its switches, without {@code --}. */
  default Set<String> switches() {
    return Set.of();
  }

  /** Runs it; returns the exit code. */
  int run(Invocation in) throws SQLException;
}

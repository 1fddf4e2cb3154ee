package io.pgbus.cli;

import io.pgbus.PgbusException;
import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.DatabaseProblem;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Runs one command line: picks the command, parses its arguments, runs it and turns every outcome
 * into an exit code ({@link CliException}): 0 done, 1 a check failed or the database failed, 2 a
 * usage error, bad input or a job that does not exist. Errors go to stderr as one line that names
 * the bad value and the fix.
 */
final class Cli {

  static final List<Command> COMMANDS =
      List.of(
          new MigrateCommand(),
          new DoctorCommand(),
          new CheckCommand(),
          new QueuesCommand(),
          new ExplainCommand(),
          new EnqueueCommand(),
          new ReencryptCommand(),
          new PauseCommand(true),
          new PauseCommand(false),
          new JobActionCommand(JobActionCommand.Kind.REPLAY),
          new JobActionCommand(JobActionCommand.Kind.RETRY));

  private final Io io;
  private final Map<String, String> env;
  private final Properties system;

  Cli(Io io, Map<String, String> env, Properties system) {
    this.io = io;
    this.env = env;
    this.system = system;
  }

  int run(String... argv) {
    List<String> args = Arrays.asList(argv);
    if (args.isEmpty()
        || args.get(0).equals("--help")
        || args.get(0).equals("-h")
        || args.get(0).equals("help") && args.size() == 1) {
      io.out().print(overview());
      return args.isEmpty() ? CliException.USAGE : 0;
    }
    if (args.get(0).equals("--version")) {
      io.out().println("pgbus-cli " + BuildVersion.current());
      return 0;
    }
    boolean helpFor = args.get(0).equals("help");
    String name = helpFor ? args.get(1) : args.get(0);
    Command command = COMMANDS.stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
    if (command == null) {
      return fail(
          CliException.USAGE,
          "unknown command '"
              + name
              + "': use one of "
              + String.join(", ", COMMANDS.stream().map(Command::name).toList())
              + " (pgbus --help)");
    }
    try {
      Args parsed = Args.parse(args.subList(helpFor ? 2 : 1, args.size()), command);
      if (helpFor || parsed.has("help")) {
        io.out().print(help(command));
        return 0;
      }
      return command.run(new Invocation(command, parsed, io, CliConfig.of(parsed, env, system)));
    } catch (CliException e) {
      return fail(e.exitCode(), e.getMessage());
    } catch (IllegalArgumentException e) {
      // Bad input: a bound of the API or the configuration (InvalidConfigException), named there.
      return fail(CliException.USAGE, e.getMessage());
    } catch (PgbusException e) {
      // InvalidJobException, InvalidFilterException: bad input, named by the API; the rest failed.
      boolean badInput =
          e instanceof io.pgbus.InvalidJobException
              || e instanceof io.pgbus.admin.InvalidFilterException;
      return fail(badInput ? CliException.USAGE : CliException.FAILED, e.getMessage());
    } catch (SQLException e) {
      return fail(
          CliException.FAILED,
          "the database failed ("
              + DatabaseProblem.of(e)
              + "): "
              + e.getMessage()
              + "; check --url, the user and password, and that PostgreSQL is up");
    }
  }

  private int fail(int code, String message) {
    io.err().println("pgbus: " + message);
    return code;
  }

  static String overview() {
    var sb = new StringBuilder();
    sb.append("pgbus ")
        .append(BuildVersion.current())
        .append(": the pgbus command line\n\n")
        .append("usage: pgbus <command> [arguments] [--json] [--yes]\n\ncommands:\n");
    for (Command c : COMMANDS) {
      sb.append(String.format("  %-8s %s%n", c.name(), c.summary()));
    }
    sb.append("\n").append(COMMON).append("\npgbus <command> --help tells more.\n");
    return sb.toString();
  }

  static String help(Command c) {
    return "usage: " + c.usageLine() + "\n\n" + c.help().strip() + "\n\n" + COMMON;
  }

  /** The flags and keys every command takes. */
  static final String COMMON =
      """
      every command:
        --url <jdbc url>        the database (PGBUS_CLI_URL), e.g. jdbc:postgresql://db:5432/app
        --user <role>           the database role (PGBUS_CLI_USER)
        --password-file <file>  a file whose first line is the password; or PGBUS_CLI_PASSWORD
                                (never a flag: other users see command lines)
        --schema <name>         the instance's schema, as the servers' pgbus.schema (PGBUS_SCHEMA;
                                default pgbus)
        --set <key>=<value>     a pgbus.* key as the servers read it (docs/configuration.md);
                                also -D<key>=<value> or its environment variable (PGBUS_...)
        --json                  one JSON document on stdout
        --yes                   consent to a change without a terminal to ask at
      exit codes: 0 done; 1 a check failed, or the database is unhealthy or unreachable;
                  2 a usage error, bad input, or a job that does not exist
      """;
}

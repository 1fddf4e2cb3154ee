package io.pgbus.cli;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One command's arguments: positionals, {@code --flag value} or {@code --flag=value}, and switches
 * ({@code --json}). Every flag is declared by the command or is global; anything else is a usage
 * error that lists what the command takes. {@code --} ends the flags.
 */
final class Args {

  /** Flags every command takes, with a value. */
  static final Set<String> GLOBAL_VALUES = Set.of("url", "user", "password-file", "schema", "set");

  /** Switches every command takes. */
  static final Set<String> GLOBAL_SWITCHES = Set.of("json", "yes", "help");

  private final List<String> positionals;
  private final Map<String, List<String>> values;
  private final Set<String> switches;

  private Args(List<String> positionals, Map<String, List<String>> values, Set<String> switches) {
    this.positionals = positionals;
    this.values = values;
    this.switches = switches;
  }

  static Args parse(List<String> raw, Command command) {
    var valueFlags = new HashSet<>(GLOBAL_VALUES);
    valueFlags.addAll(command.valueFlags());
    var switchFlags = new HashSet<>(GLOBAL_SWITCHES);
    switchFlags.addAll(command.switches());
    var positionals = new ArrayList<String>();
    var values = new LinkedHashMap<String, List<String>>();
    var switches = new HashSet<String>();
    for (int i = 0; i < raw.size(); i++) {
      String a = raw.get(i);
      if (a.equals("--")) {
        positionals.addAll(raw.subList(i + 1, raw.size()));
        break;
      }
      if (!a.startsWith("--") || a.length() == 2) {
        positionals.add(a);
        continue;
      }
      int eq = a.indexOf('=');
      String name = eq < 0 ? a.substring(2) : a.substring(2, eq);
      if (name.equals("password")) {
        throw CliException.usage(
            "--password is refused: a password on the command line is seen by every user of the"
                + " machine (ps, shell history); set PGBUS_CLI_PASSWORD or put it in a file named"
                + " by --password-file");
      }
      if (switchFlags.contains(name)) {
        if (eq >= 0) {
          throw CliException.usage(a + ": --" + name + " takes no value; write --" + name);
        }
        switches.add(name);
      } else if (valueFlags.contains(name)) {
        String v;
        if (eq >= 0) {
          v = a.substring(eq + 1);
        } else if (i + 1 < raw.size()) {
          v = raw.get(++i);
        } else {
          throw CliException.usage("--" + name + " needs a value: --" + name + " <value>");
        }
        values.computeIfAbsent(name, k -> new ArrayList<>()).add(v);
      } else {
        var known = new TreeSet<String>();
        valueFlags.forEach(f -> known.add("--" + f));
        switchFlags.forEach(f -> known.add("--" + f));
        throw CliException.usage(
            "unknown flag --"
                + name
                + " for pgbus "
                + command.name()
                + ": use one of "
                + String.join(", ", known)
                + " (pgbus "
                + command.name()
                + " --help)");
      }
    }
    return new Args(List.copyOf(positionals), values, Set.copyOf(switches));
  }

  List<String> positionals() {
    return positionals;
  }

  boolean has(String switchName) {
    return switches.contains(switchName);
  }

  /** The flag's value, null when it is not given; given twice is a usage error. */
  String value(String flag) {
    List<String> v = values.get(flag);
    if (v == null) {
      return null;
    }
    if (v.size() > 1) {
      throw CliException.usage("--" + flag + " is given " + v.size() + " times: give it once");
    }
    return v.get(0);
  }

  /** Every value of a flag that may repeat ({@code --set}). */
  List<String> values(String flag) {
    return values.getOrDefault(flag, List.of());
  }

  /** The positionals, refused unless there are exactly {@code names.length}, named in the error. */
  List<String> exactly(Command command, String... names) {
    if (positionals.size() != names.length) {
      throw CliException.usage(
          "pgbus "
              + command.name()
              + " takes "
              + (names.length == 0 ? "no arguments" : "<" + String.join("> <", names) + ">")
              + ", was given "
              + (positionals.isEmpty() ? "none" : String.join(" ", positionals))
              + ": "
              + command.usageLine());
    }
    return positionals;
  }
}

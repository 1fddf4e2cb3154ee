package io.pgbus.cli;

import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.SchemaName;
import io.pgbus.jakarta.ServerSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;

/**
 * The command line's configuration: the servers' {@code pgbus.*} keys and its own {@code
 * pgbus.cli.*} ones, looked up as MicroProfile Config looks them up, highest first: a flag ({@code
 * --url}, {@code --set key=value}), a system property ({@code -Dkey=value}), then an environment
 * variable by MicroProfile's mapping (the key as written, then with every character other than a
 * letter or digit as {@code _}, then that in upper case: {@code pgbus.cli.url} is {@code
 * PGBUS_CLI_URL}). A password is read from the environment or a file, never from a flag.
 */
final class CliConfig {

  static final String URL = "pgbus.cli.url";
  static final String USER = "pgbus.cli.user";
  static final String PASSWORD = "pgbus.cli.password";
  static final String PASSWORD_FILE = "pgbus.cli.password-file";

  /** The most of a password file read: a password, not a file someone pointed at by mistake. */
  static final int MAX_PASSWORD_FILE_BYTES = 4096;

  private final Map<String, String> flags;
  private final Map<String, String> env;
  private final Properties system;

  private CliConfig(Map<String, String> flags, Map<String, String> env, Properties system) {
    this.flags = flags;
    this.env = env;
    this.system = system;
  }

  static CliConfig of(Args args, Map<String, String> env, Properties system) {
    var flags = new LinkedHashMap<String, String>();
    for (String s : args.values("set")) {
      int eq = s.indexOf('=');
      String key = eq < 0 ? s : s.substring(0, eq).strip();
      if (eq < 0 || !key.startsWith("pgbus.")) {
        throw CliException.usage(
            "--set "
                + s
                + ": write --set pgbus.<key>=<value>, for example --set"
                + " pgbus.max-payload-bytes=65536 (keys: docs/configuration.md)");
      }
      flags.put(key, s.substring(eq + 1));
    }
    putFlag(flags, URL, args.value("url"));
    putFlag(flags, USER, args.value("user"));
    putFlag(flags, PASSWORD_FILE, args.value("password-file"));
    putFlag(flags, SchemaName.KEY, args.value("schema"));
    return new CliConfig(flags, env, system);
  }

  private static void putFlag(Map<String, String> flags, String key, String value) {
    if (value != null) {
      flags.put(key, value);
    }
  }

  /** A key's value by MicroProfile Config's order; empty when it is not set or blank. */
  Optional<String> get(String key) {
    String v = flags.get(key);
    if (v == null) {
      v = system.getProperty(key);
    }
    if (v == null) {
      v = env.get(key);
    }
    String sanitized = key.replaceAll("[^A-Za-z0-9]", "_");
    if (v == null) {
      v = env.get(sanitized);
    }
    if (v == null) {
      v = env.get(sanitized.toUpperCase(Locale.ROOT));
    }
    return Optional.ofNullable(v).map(String::strip).filter(s -> !s.isEmpty());
  }

  /**
   * The servers' settings as a deployment reads them, with the same checks; the keys checked for
   * misspellings are those of flags and system properties (environment variable names do not map
   * back to keys, as in a server).
   */
  ServerSettings settings() {
    var keys = new TreeSet<>(flags.keySet());
    system.stringPropertyNames().stream().filter(k -> k.startsWith("pgbus.")).forEach(keys::add);
    return ServerSettings.read(this::get, keys);
  }

  String url() {
    String url =
        get(URL)
            .orElseThrow(
                () ->
                    CliException.usage(
                        "no database given: set --url or PGBUS_CLI_URL to a JDBC URL such as"
                            + " jdbc:postgresql://db.example.com:5432/app"));
    if (!url.startsWith("jdbc:postgresql:")) {
      throw CliException.usage(
          "--url "
              + url
              + " is not a PostgreSQL JDBC URL: write jdbc:postgresql://<host>:<port>/<database>");
    }
    if (flags.containsKey(URL) && url.toLowerCase(Locale.ROOT).contains("password=")) {
      throw CliException.usage(
          "--url carries a password, which every user of the machine sees (ps, shell history):"
              + " drop password= from it and set PGBUS_CLI_PASSWORD or --password-file");
    }
    return url;
  }

  /** The instance's schema: {@code --schema}, else {@code pgbus.schema} as the servers read it. */
  SchemaName schema() {
    try {
      return get(SchemaName.KEY).map(SchemaName::of).orElse(SchemaName.DEFAULT);
    } catch (InvalidConfigException e) {
      throw CliException.usage(e.keyedMessage() + " (--schema)");
    }
  }

  String user() {
    return get(USER).orElse(null);
  }

  /** The password: from {@code pgbus.cli.password-file}, else {@code pgbus.cli.password}. */
  String password() {
    Optional<String> file = get(PASSWORD_FILE);
    if (file.isEmpty()) {
      return get(PASSWORD).orElse(null);
    }
    Path p = Path.of(file.get());
    try {
      if (Files.size(p) > MAX_PASSWORD_FILE_BYTES) {
        throw CliException.usage(
            "--password-file "
                + p
                + " has "
                + Files.size(p)
                + " bytes: a password file holds the password alone (at most "
                + MAX_PASSWORD_FILE_BYTES
                + " bytes)");
      }
      String text = Files.readString(p, StandardCharsets.UTF_8);
      // The first line: an editor's trailing newline is not part of the password.
      int nl = text.indexOf('\n');
      String line = nl < 0 ? text : text.substring(0, nl);
      return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    } catch (IOException e) {
      throw CliException.usage(
          "--password-file "
              + p
              + " cannot be read ("
              + e.getClass().getSimpleName()
              + "): name a file this user can read that holds the password");
    }
  }
}

package io.pgbus.cli;

import io.pgbus.engine.testing.TestDatabase;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Runs the command line's main in-process against a test database, with captured stdout and stderr,
 * the environment it is given, and a standard input that is or is not a terminal.
 */
final class CliRunner {

  /** What one run printed and returned. */
  record Result(int exit, String out, String err) {}

  private final Map<String, String> env = new HashMap<>();
  private boolean terminal;
  private String stdin = "";

  CliRunner(TestDatabase db) {
    if (db != null) {
      env.put("PGBUS_CLI_URL", db.jdbcUrl());
    }
  }

  CliRunner env(String name, String value) {
    env.put(name, value);
    return this;
  }

  /** Standard input is a terminal at which the operator types {@code typed}. */
  CliRunner atTerminal(String typed) {
    this.terminal = true;
    this.stdin = typed;
    return this;
  }

  Result run(String... args) {
    var out = new ByteArrayOutputStream();
    var err = new ByteArrayOutputStream();
    var io =
        new Io(
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            new BufferedReader(new StringReader(stdin)),
            terminal);
    int exit = new Cli(io, Map.copyOf(env), new Properties()).run(args);
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** Whether the database has the function, for the explain work's functions (issue #28). */
  /**
   * Runs {@code body} while {@code signature} (e.g. {@code pgbus.explain(bigint)}) is renamed away,
   * as on a schema migrated before the function existed, and renames it back afterwards.
   */
  static void withoutFunction(TestDatabase db, String signature, ThrowingRunnable body)
      throws Exception {
    String name = signature.substring(signature.indexOf('.') + 1, signature.indexOf('('));
    try (Connection c = db.helperConnection();
        var st = c.createStatement()) {
      st.execute("ALTER FUNCTION " + signature + " RENAME TO " + name + "_hidden");
      try {
        body.run();
      } finally {
        st.execute(
            "ALTER FUNCTION "
                + signature.replace("." + name + "(", "." + name + "_hidden(")
                + " RENAME TO "
                + name);
      }
    }
  }

  /** A test body that may throw. */
  interface ThrowingRunnable {
    void run() throws Exception;
  }

  static boolean hasFunction(TestDatabase db, String signature) throws SQLException {
    try (Connection c = db.helperConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT pg_catalog.to_regprocedure(?) IS NOT NULL")) {
      ps.setString(1, signature);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}

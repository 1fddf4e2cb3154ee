package io.pgbus.engine.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.postgresql.Driver;

/**
 * The {@code pgbus} schema of a database as text: {@code pg_dump --schema-only} of schema {@code
 * pgbus} without Flyway's history table and without owners, normalised so that the text depends on
 * the schema alone, not on the pg_dump or server build: no {@code SET} lines, no version lines, no
 * {@code \restrict} keys, at most one blank line in a row. Grants are kept ({@code GRANT SELECT ON
 * pgbus.setting TO PUBLIC} is part of the schema). docs/schema.sql is this text of a freshly
 * migrated database.
 *
 * <p>pg_dump is found as {@value #PG_DUMP_ENV}, else the newest {@code
 * /usr/lib/postgresql/<major>/bin/pg_dump}, else {@code pg_dump} on the {@code PATH}. It must be of
 * the server's major version or newer.
 */
public final class SchemaDump {

  /** An environment variable naming the pg_dump to use. */
  public static final String PG_DUMP_ENV = "PGBUS_PG_DUMP";

  /** The one command that rewrites docs/schema.sql, run from the repository's root. */
  public static final String REGENERATE = "tools/dump-schema";

  /**
   * The file's head. Its two settings make the file load into an empty database in one pass ({@code
   * psql -v ON_ERROR_STOP=1 -f docs/schema.sql}), as pg_dump's own output does: a function's body
   * is checked only when it runs, since pg_dump orders functions by name and not by who calls whom;
   * and names resolve through pg_catalog alone, so every name in the file means what it says
   * whatever the loading database has in public. The same settings in pg_dump's output vary with
   * its version, so they are dropped from the dump ({@link #NOISE}) and written here once.
   */
  private static final String HEADER =
      """
      -- The pgbus schema as a fresh install has it: every type, table, index and function, current.
      -- Generated from the migrations by tools/dump-schema (pg_dump --schema-only); do not edit.
      -- SchemaDumpTest fails when this file and the migrations disagree, or when it does not load
      -- into an empty database in one pass (psql -v ON_ERROR_STOP=1 -f). See docs/schema.md.

      SET check_function_bodies = false;
      SET search_path = '';
      """;

  private static final Pattern NOISE =
      Pattern.compile(
          "(?m)^(?:SET .*|SELECT pg_catalog\\.set_config\\('search_path'.*"
              + "|\\\\(?:un)?restrict .*|-- Dumped (?:from|by) .*)\\n");
  private static final Pattern BANNER =
      Pattern.compile("(?m)^--\\n-- PostgreSQL database dump(?: complete)?\\n--\\n");
  private static final Pattern BLANK_RUNS = Pattern.compile("\\n{3,}");

  private SchemaDump() {}

  /** docs/schema.sql, from the module's directory (where Maven runs the tests). */
  public static Path docsFile() {
    return Path.of("..", "docs", "schema.sql").toAbsolutePath().normalize();
  }

  /** The normalised schema of the test database. */
  public static String of(TestDatabase db) throws IOException, InterruptedException {
    return normalise(
        run(
                db,
                pgDump(),
                "--schema-only",
                "--schema=pgbus",
                "--exclude-table=pgbus.schema_history",
                "--no-owner",
                "--no-tablespaces")
            .out());
  }

  /**
   * Loads {@code file} into the test database with one {@code psql -v ON_ERROR_STOP=1 -f}, as a
   * reader would load docs/schema.sql; fails with psql's message on the first error. psql is the
   * one beside the pg_dump in use, else the one on the {@code PATH}.
   */
  public static void load(TestDatabase db, Path file) throws IOException, InterruptedException {
    Path pgDump = Path.of(pgDump());
    Path besideIt = pgDump.resolveSibling("psql");
    String psql =
        pgDump.getParent() != null && Files.isExecutable(besideIt) ? besideIt.toString() : "psql";
    Output loaded =
        run(
            db,
            psql,
            "--no-psqlrc",
            "--quiet",
            "--set=ON_ERROR_STOP=1",
            "--file=" + file.toAbsolutePath());
    // A WARNING or NOTICE is no error to psql, but a file that makes one is not a clean load.
    if (!loaded.err().isBlank()) {
      throw new IllegalStateException(psql + " -f " + file + " said: " + loaded.err().strip());
    }
  }

  /** What a client wrote. */
  private record Output(String out, String err) {}

  /** Runs a PostgreSQL client against the test database; fails when it exits with an error. */
  private static Output run(TestDatabase db, String... tool)
      throws IOException, InterruptedException {
    Properties url = Driver.parseURL(db.jdbcUrl(), null);
    if (url == null) {
      throw new IllegalStateException("not a pgjdbc URL: " + db.name());
    }
    var command =
        new ArrayList<>(
            List.of(
                "--host=" + url.getProperty("PGHOST"),
                "--port=" + url.getProperty("PGPORT"),
                "--dbname=" + url.getProperty("PGDBNAME")));
    command.addAll(0, List.of(tool));
    if (url.getProperty("user") != null) {
      command.add("--username=" + url.getProperty("user"));
    }
    var pb = new ProcessBuilder(command).redirectErrorStream(false);
    pb.environment().put("PGCONNECT_TIMEOUT", "10");
    if (url.getProperty("password") != null) {
      pb.environment().put("PGPASSWORD", url.getProperty("password"));
    }
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new IllegalStateException(
          "could not run "
              + command.get(0)
              + ": install the PostgreSQL client (pg_dump and psql, of the server's major version or"
              + " newer),"
              + " or set "
              + PG_DUMP_ENV
              + " to its path",
          e);
    }
    // The schema is some 100 KB and psql -q prints nothing: reading stdout to its end before
    // stderr cannot block on stderr.
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      if (err.contains("server version mismatch")) {
        // The tool, not the schema: tools/pg-matrix runs newer servers than this machine's
        // pg_dump. Skipped with the reason, as a missing pg_dump would not be.
        Assumptions.abort(
            "skipped: "
                + err.strip()
                + "; set "
                + PG_DUMP_ENV
                + " to a pg_dump of the server's major version or newer to run it");
      }
      throw new IllegalStateException(
          String.join(" ", command)
              + " failed: "
              + err.strip()
              + " (a pg_dump older than the server refuses it; set "
              + PG_DUMP_ENV
              + " to a newer one)");
    }
    return new Output(out, err);
  }

  /** The dump without what varies with the pg_dump and server build; with the file's header. */
  static String normalise(String dump) {
    String s = dump.replace("\r\n", "\n");
    s = NOISE.matcher(s).replaceAll("");
    s = BANNER.matcher(s).replaceAll("");
    s = BLANK_RUNS.matcher(s).replaceAll("\n\n");
    return HEADER + "\n" + s.strip() + "\n";
  }

  private static String pgDump() {
    String fromEnv = System.getenv(PG_DUMP_ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromEnv.strip();
    }
    Path debian = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(debian)) {
      try (Stream<Path> majors = Files.list(debian)) {
        var newest =
            majors
                .map(m -> m.resolve("bin/pg_dump"))
                .filter(Files::isExecutable)
                .max(Comparator.comparingInt(SchemaDump::major));
        if (newest.isPresent()) {
          return newest.get().toString();
        }
      } catch (IOException e) {
        // Fall back to the PATH.
      }
    }
    return "pg_dump";
  }

  private static int major(Path pgDump) {
    try {
      return Integer.parseInt(pgDump.getParent().getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}

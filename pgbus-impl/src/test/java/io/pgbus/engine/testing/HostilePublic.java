package io.pgbus.engine.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A schema {@code public} that a stranger with only CONNECT could have filled (up to PostgreSQL 14
 * anyone may create there): a look-alike of every operator of pg_catalog over the common types,
 * arrays and pgbus's own enums and domains, and of every pg_catalog function whose name pgbus's SQL
 * mentions, wherever pg_catalog serves the argument types without an exact match (the only case in
 * which a name resolves through the path at all). Each look-alike records itself in {@code
 * public.trap_log} and in the sequence {@code public.trap_hits} (which a rollback does not undo),
 * then does what the real one does, so the code under test keeps running. See {@code
 * hostile-public.sql}.
 *
 * <p>{@link TestDatabase#migrated()} plants them in every test database (once, in a template) and
 * fails the test class when any ran: the whole engine suite runs against a hostile public. {@code
 * -Dpgbus.test.hostile-public=false} turns that off.
 */
public final class HostilePublic {

  /** The system property that turns the look-alikes off ({@code false}); on by default. */
  public static final String PROPERTY = "pgbus.test.hostile-public";

  private static final Pattern CALL = Pattern.compile("\\b([a-z_][a-z0-9_]*)\\s*\\(");

  private HostilePublic() {}

  /** Whether test databases get the look-alikes. */
  public static boolean enabled() {
    return !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true"));
  }

  /**
   * Plants the look-alikes in the database of {@code c}, which must already hold the pgbus schema;
   * {@code c} must be a superuser's or the owner's. Takes a few seconds.
   */
  public static void plant(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(script());
    }
    try (PreparedStatement ps = c.prepareStatement("CALL public.plant_look_alikes(?)")) {
      ps.setArray(1, c.createArrayOf("text", functionNames().toArray()));
      ps.execute();
    }
  }

  /**
   * What the look-alikes recorded: one line each, naming the look-alike and the statement that ran
   * it. Hits inside a transaction that rolled back leave no line but still count: then a line says
   * how many.
   */
  public static List<String> hits(Connection c) throws SQLException {
    var out = new ArrayList<String>();
    long logged = 0;
    try (Statement st = c.createStatement()) {
      try (ResultSet rs =
          st.executeQuery(
              "SELECT what, query, count(*) FROM public.trap_log GROUP BY what, query"
                  + " ORDER BY min(at) LIMIT 50")) {
        while (rs.next()) {
          out.add(rs.getString(1) + " ran " + rs.getLong(3) + "x in: " + rs.getString(2));
          logged += rs.getLong(3);
        }
      }
      try (ResultSet rs =
          st.executeQuery(
              "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.trap_hits")) {
        rs.next();
        long count = rs.getLong(1);
        if (count > logged) {
          out.addAll(rolledBack(c, 20));
          out.add(
              count
                  + " look-alike call(s) in all, "
                  + (count - logged)
                  + " of them in transactions that rolled back (or past the first 50 kinds)");
        }
      }
    }
    return out;
  }

  // The hits whose trap_log rows a rollback took: the files the look-alikes wrote, if the server
  // let them.
  private static List<String> rolledBack(Connection c, int max) {
    var out = new ArrayList<String>();
    try (PreparedStatement ps =
        c.prepareStatement(
            """
            SELECT pg_catalog.pg_read_file('/tmp/' || f)
              FROM pg_catalog.pg_ls_dir('/tmp') AS f
             WHERE f LIKE 'pgbus-trap-' || pg_catalog.current_database() || '-%'
             ORDER BY f LIMIT ?
            """)) {
      ps.setInt(1, max);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add("(rolled back) " + rs.getString(1).strip().replace('\t', ' '));
        }
      }
    } catch (SQLException notAllowed) {
      // Not a superuser, or another server's /tmp: the count below still tells.
    }
    return out;
  }

  /**
   * The identifiers that pgbus's sources write before a parenthesis: every SQL function its
   * statements can call, among many Java names (which only plant a few more look-alikes). Read from
   * the sources of pgbus-impl and its migrations, found from the working directory up.
   */
  public static List<String> functionNames() {
    Path root = repositoryRoot();
    var names = new TreeSet<String>();
    for (String dir :
        List.of(
            "pgbus-impl/src/main/java",
            "pgbus-impl/src/main/resources/io/pgbus/db/migration",
            "pgbus-console/src/main/java",
            "pgbus-health/src/main/java")) {
      Path d = root.resolve(dir);
      if (!Files.isDirectory(d)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(d)) {
        for (Path f :
            files
                .filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".sql"))
                .toList()) {
          Matcher m = CALL.matcher(Files.readString(f).toLowerCase(java.util.Locale.ROOT));
          while (m.find()) {
            names.add(m.group(1));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("could not read pgbus's sources under " + d, e);
      }
    }
    if (names.isEmpty()) {
      throw new IllegalStateException(
          "found no pgbus sources from " + root + ": run the tests from the repository");
    }
    return List.copyOf(names);
  }

  private static Path repositoryRoot() {
    Path p = Path.of("").toAbsolutePath();
    while (p != null) {
      if (Files.isDirectory(p.resolve("pgbus-impl/src/main"))) {
        return p;
      }
      p = p.getParent();
    }
    throw new IllegalStateException("no pgbus-impl/src/main above " + Path.of("").toAbsolutePath());
  }

  private static String script() {
    try (InputStream in =
        Objects.requireNonNull(
            HostilePublic.class.getResourceAsStream("hostile-public.sql"),
            "hostile-public.sql next to HostilePublic")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

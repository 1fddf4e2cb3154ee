package io.pgbus.engine.testing;

import io.pgbus.engine.Schema;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The template database that migrated test databases are copied from: the pgbus schema as {@link
 * Schema#migrate} installs it, and a {@link HostilePublic}. Planting takes about half a minute, so
 * it is built once and kept on the server under a name made of a hash of what went into it (the
 * migrations, the look-alike script, the function names pgbus's sources mention): a later run, or
 * another worktree's, with the same inputs reuses it. Templates not used for a day are dropped when
 * a new one is built.
 */
final class HostileTemplate {

  private static final long BUILD_LOCK = 0x7067627573_7470L; // "pgbus" "tp"
  private static volatile String name;

  private HostileTemplate() {}

  /** The template's name, built on first use. */
  static String name() {
    String n = name;
    if (n == null) {
      synchronized (HostileTemplate.class) {
        n = name;
        if (n == null) {
          try {
            n = ensure();
          } catch (SQLException e) {
            throw new IllegalStateException(
                "could not build the test template database with a hostile public", e);
          }
          name = n;
        }
      }
    }
    return n;
  }

  private static String ensure() throws SQLException {
    List<String> functions = HostilePublic.functionNames();
    String tpl = "pgbus_test_tpl_" + hash(functions);
    try (Connection admin = DriverManager.getConnection(TestPostgres.adminUrl());
        Statement st = admin.createStatement()) {
      // One builder at a time across JVMs (parallel runs share the server).
      try (PreparedStatement lock = admin.prepareStatement("SELECT pg_advisory_lock(?)")) {
        lock.setLong(1, BUILD_LOCK);
        lock.execute();
      }
      try {
        if (isTemplate(admin, tpl)) {
          touch(st, tpl);
          return tpl;
        }
        long started = System.nanoTime();
        st.execute("DROP DATABASE IF EXISTS \"" + tpl + "\" WITH (FORCE)");
        st.execute("CREATE DATABASE \"" + tpl + "\"");
        var ds = new PGSimpleDataSource();
        ds.setUrl(TestDatabase.withDatabase(TestPostgres.adminUrl(), tpl));
        ds.setApplicationName("pgbus-test-template");
        Schema.migrate(ds);
        try (Connection c = ds.getConnection()) {
          HostilePublic.plant(c);
        }
        st.execute("ALTER DATABASE \"" + tpl + "\" WITH IS_TEMPLATE true");
        touch(st, tpl);
        System.out.printf(
            "pgbus tests: built the template database %s (schema + hostile public) in %.1f s%n",
            tpl, (System.nanoTime() - started) / 1e9);
        dropStale(admin, st, tpl);
        return tpl;
      } finally {
        try (PreparedStatement unlock = admin.prepareStatement("SELECT pg_advisory_unlock(?)")) {
          unlock.setLong(1, BUILD_LOCK);
          unlock.execute();
        }
      }
    }
  }

  private static boolean isTemplate(Connection admin, String tpl) throws SQLException {
    try (PreparedStatement ps =
        admin.prepareStatement("SELECT datistemplate FROM pg_database WHERE datname = ?")) {
      ps.setString(1, tpl);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /** Records the last use in the database's comment: stale ones are dropped by age. */
  private static void touch(Statement st, String tpl) throws SQLException {
    st.execute(
        "COMMENT ON DATABASE \""
            + tpl
            + "\" IS 'pgbus test template, last used "
            + System.currentTimeMillis()
            + "'");
  }

  private static void dropStale(Connection admin, Statement st, String keep) throws SQLException {
    var stale = new java.util.ArrayList<String>();
    try (PreparedStatement ps =
        admin.prepareStatement(
            """
            SELECT d.datname FROM pg_database d
             WHERE d.datname LIKE 'pgbus\\_test\\_tpl\\_%' AND d.datname <> ?
               AND coalesce(substring(shobj_description(d.oid, 'pg_database')
                                      FROM 'last used ([0-9]+)')::bigint, 0)
                   < (extract(epoch FROM now()) * 1000)::bigint - 86400000
            """)) {
      ps.setString(1, keep);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          stale.add(rs.getString(1));
        }
      }
    }
    for (String s : stale) {
      try {
        st.execute("ALTER DATABASE \"" + s + "\" WITH IS_TEMPLATE false");
        st.execute("DROP DATABASE IF EXISTS \"" + s + "\"");
      } catch (SQLException inUse) {
        // Another run is copying it right now: the next build drops it.
      }
    }
  }

  private static String hash(List<String> functions) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      Path root = Path.of("").toAbsolutePath();
      while (root != null && !Files.isDirectory(root.resolve("pgbus-impl/src/main"))) {
        root = root.getParent();
      }
      if (root == null) {
        throw new IllegalStateException("no pgbus-impl/src/main above the working directory");
      }
      try (Stream<Path> files =
          Files.walk(root.resolve("pgbus-impl/src/main/resources/io/pgbus/db/migration"))) {
        for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
          sha.update(f.getFileName().toString().getBytes(StandardCharsets.UTF_8));
          sha.update(Files.readAllBytes(f));
        }
      }
      sha.update(
          Files.readAllBytes(
              root.resolve(
                  "pgbus-impl/src/test/resources/io/pgbus/engine/testing/hostile-public.sql")));
      sha.update(String.join(",", functions).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}

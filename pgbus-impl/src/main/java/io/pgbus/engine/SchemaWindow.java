package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Where an installed schema stands for one build: inside the build's compatibility window, or
 * outside it and why. A build runs on its own schema version ({@link Schema#EXPECTED_VERSION}) and
 * on every later one whose {@code pgbus.schema_compat.oldest_build} it is not older than: later
 * versions only expanded what it calls, until a contract migration raises that row. See
 * docs/schema.md, "The compatibility window".
 *
 * @param installed the installed (versioned) schema version; null: no schema
 * @param build the build asking
 * @param oldestServed the oldest build the schema serves; null before V25
 * @param newestMigrator the newest build that migrated the schema; null before V25 or before one
 *     recorded itself
 */
public record SchemaWindow(
    String installed, BuildVersion build, BuildVersion oldestServed, BuildVersion newestMigrator) {

  private static final String COMPAT = "SELECT oldest_build, newest_build FROM pgbus.schema_compat";

  /** Reads the window of {@code build} on the caller's connection. */
  public static SchemaWindow read(Connection c, BuildVersion build) throws SQLException {
    String installed = Schema.installedVersion(c);
    if (installed == null) {
      return new SchemaWindow(null, build, null, null);
    }
    try (PreparedStatement ps = c.prepareStatement(Schema.COMPAT_EXISTS);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      if (!rs.getBoolean(1)) {
        return new SchemaWindow(installed, build, null, null);
      }
    }
    try (PreparedStatement ps = c.prepareStatement(COMPAT);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return new SchemaWindow(installed, build, null, null);
      }
      String newest = rs.getString(2);
      return new SchemaWindow(
          installed,
          build,
          BuildVersion.parse(rs.getString(1)),
          newest == null ? null : BuildVersion.parse(newest));
    }
  }

  /** The window of this build. */
  public static SchemaWindow read(Connection c) throws SQLException {
    return read(c, BuildVersion.current());
  }

  /**
   * Why this build cannot run on the schema, as a public category ({@link
   * DatabaseProblem#SCHEMA_MISSING}, {@link DatabaseProblem#SCHEMA_OUTDATED}, {@link
   * DatabaseProblem#SCHEMA_TOO_NEW}); null inside the window.
   */
  public String problem() {
    if (installed == null) {
      return DatabaseProblem.SCHEMA_MISSING;
    }
    if (behind()) {
      return DatabaseProblem.SCHEMA_OUTDATED;
    }
    if (oldestServed != null && build.olderThan(oldestServed)) {
      return DatabaseProblem.SCHEMA_TOO_NEW;
    }
    return null;
  }

  /** True inside the window: the build starts its engine on this schema. */
  public boolean inside() {
    return problem() == null;
  }

  /**
   * True when a newer build migrated the schema (a later schema version, or a newer build at this
   * one): this build must not run its migrations, which would put its older function definitions
   * over the newer ones.
   */
  public boolean newerThanBuild() {
    return installed != null && ahead()
        || newestMigrator != null && build.olderThan(newestMigrator);
  }

  /** What was found, naming both versions: for the log, the doctor, the admin API. */
  public String explain() {
    String self =
        "this build (pgbus " + build + ") runs on schema version " + Schema.EXPECTED_VERSION;
    String p = problem();
    if (p == null) {
      return "pgbus schema version "
          + installed
          + (oldestServed == null ? "" : ", serving pgbus " + oldestServed + " and later")
          + (newestMigrator == null ? "" : ", migrated by pgbus " + newestMigrator)
          + "; "
          + self
          + (ahead() ? " and on later ones that still serve it" : "");
    }
    return switch (p) {
      case DatabaseProblem.SCHEMA_MISSING -> "the pgbus schema is missing; " + self;
      case DatabaseProblem.SCHEMA_OUTDATED ->
          "the pgbus schema is at version " + installed + "; " + self;
      default ->
          "the pgbus schema is at version "
              + installed
              + " and serves pgbus "
              + oldestServed
              + " and later only (a contract migration dropped what older builds call); "
              + self
              + " while the schema still serves it";
    };
  }

  /** What to do outside the window; null inside. */
  public String fix() {
    String p = problem();
    if (p == null) {
      return null;
    }
    return p.equals(DatabaseProblem.SCHEMA_TOO_NEW)
        ? "deploy pgbus "
            + oldestServed
            + " or later (docs/schema.md, \"The compatibility window\")"
        : "set pgbus.migrate=true (the default), or apply the migrations as the schema owner"
            + " (docs/operations.md, Security)";
  }

  /** {@link #explain()}, and the fix when there is one: one line for the log. */
  public String message() {
    String fix = fix();
    return fix == null ? explain() : explain() + ": " + fix;
  }

  private boolean behind() {
    return Integer.parseInt(installed) < Integer.parseInt(Schema.EXPECTED_VERSION);
  }

  private boolean ahead() {
    return Integer.parseInt(installed) > Integer.parseInt(Schema.EXPECTED_VERSION);
  }
}

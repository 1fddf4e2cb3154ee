package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The {@code pgbus} schema and its migrations, applied by Flyway: versioned ones ({@code
 * V<n>__*.sql}: types, tables, indexes, and the drops a new signature needs) and repeatable ones
 * ({@code R__*.sql}: each function's one current definition, applied after the versioned ones and
 * again whenever the file changes). See docs/schema.md, "Where the schema lives". Flyway serialises
 * concurrent migrators on PostgreSQL with an advisory lock, so ten JVMs starting at once apply each
 * migration once; we add our own session advisory lock around the whole run so that even the first
 * {@code CREATE SCHEMA} cannot race.
 */
public final class Schema {

  /**
   * The versioned migration this build of the engine expects. Repeatable migrations have no
   * version: they change no number here.
   */
  public static final String EXPECTED_VERSION = "23";

  /** The schema history table, inside the {@code pgbus} schema. */
  static final String HISTORY_TABLE = "schema_history";

  // An arbitrary, fixed key: "pgbus" in ASCII. Held only for the duration of a migration.
  private static final long MIGRATION_LOCK = 0x7067627573L;

  // Repeatable migrations are recorded with a NULL version, after the versioned ones: skipped here.
  private static final String VERSION =
      "SELECT version FROM pgbus.schema_history WHERE success AND version IS NOT NULL"
          + " ORDER BY installed_rank DESC LIMIT 1";

  private static final String HISTORY_EXISTS =
      "SELECT pg_catalog.to_regclass('pgbus.schema_history') IS NOT NULL";

  private Schema() {}

  /** Applies pending migrations and returns the (versioned) version now installed. */
  public static String migrate(DataSource dataSource) {
    try (Connection lockHolder = dataSource.getConnection()) {
      lockHolder.setAutoCommit(true);
      try (PreparedStatement ps =
          lockHolder.prepareStatement("SELECT pg_catalog.pg_advisory_lock(?)")) {
        ps.setLong(1, MIGRATION_LOCK);
        ps.execute();
      }
      try {
        MigrateResult result =
            Flyway.configure(Schema.class.getClassLoader())
                .dataSource(dataSource)
                .schemas("pgbus")
                .createSchemas(true)
                .table(HISTORY_TABLE)
                // On Liberty (WebSphere class loaders) Flyway finds a location only through a
                // marker file in it: io/pgbus/db/migration/flyway.location.
                // Flyway also scans its default callback location, db/callback, whatever is
                // configured; pgbus ships an empty marker there too, or Liberty logs an ERROR.
                .locations("classpath:io/pgbus/db/migration")
                .callbackLocations("classpath:io/pgbus/db/migration")
                .failOnMissingLocations(true)
                // A later build may merge or rename a repeatable migration: the old one's row
                // then has no file, which is no error. A newer versioned one (a newer build ran
                // first) is not an error either; the version check after migrating reports it.
                .ignoreMigrationPatterns("*:future", "repeatable:missing")
                .load()
                .migrate();
        return result.targetSchemaVersion != null
            ? result.targetSchemaVersion
            : result.initialSchemaVersion;
      } finally {
        try (PreparedStatement ps =
            lockHolder.prepareStatement("SELECT pg_catalog.pg_advisory_unlock(?)")) {
          ps.setLong(1, MIGRATION_LOCK);
          ps.execute();
        }
      }
    } catch (SQLException e) {
      throw new PgbusException("pgbus could not migrate its schema: " + e.getMessage(), e);
    }
  }

  /**
   * The installed schema version, or {@code null} when the schema is missing.
   *
   * @throws SQLException when the database cannot be reached
   */
  public static String installedVersion(Connection c) throws SQLException {
    try (PreparedStatement exists = c.prepareStatement(HISTORY_EXISTS)) {
      try (ResultSet rs = exists.executeQuery()) {
        rs.next();
        if (!rs.getBoolean(1)) {
          return null;
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement(VERSION);
        ResultSet rs = ps.executeQuery()) {
      return rs.next() ? rs.getString(1) : null;
    }
  }
}

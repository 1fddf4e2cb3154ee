package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
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
  public static final String EXPECTED_VERSION = "60";

  /** The schema history table, inside the {@code pgbus} schema. */
  static final String HISTORY_TABLE = "schema_history";

  // An arbitrary, fixed key: "pgbus" in ASCII (another schema's is derived from it, see
  // SchemaName#lockKey). Held only for the duration of a migration.
  private static final long MIGRATION_LOCK = 0x7067627573L;

  // Repeatable migrations are recorded with a NULL version, after the versioned ones: skipped here.
  private static final String VERSION =
      "SELECT version FROM pgbus.schema_history WHERE success AND version IS NOT NULL"
          + " ORDER BY installed_rank DESC LIMIT 1";

  private static final String HISTORY_EXISTS =
      "SELECT pg_catalog.to_regclass('pgbus.schema_history') IS NOT NULL";

  // Under the migration lock, so that two builds migrating at once record the newer one.
  private static final String RECORD_MIGRATOR =
      "UPDATE pgbus.schema_compat SET newest_build = ?::text, updated_at = pg_catalog.now()"
          + " WHERE newest_build IS DISTINCT FROM ?::text";

  static final String COMPAT_EXISTS =
      "SELECT pg_catalog.to_regclass('pgbus.schema_compat') IS NOT NULL";

  private static final System.Logger LOG = System.getLogger(Schema.class.getName());

  private Schema() {}

  /** Applies this build's pending migrations and returns the (versioned) version now installed. */
  public static String migrate(DataSource dataSource) {
    return migrate(dataSource, BuildVersion.current());
  }

  /**
   * Applies the pending migrations as build {@code build} (tests pass an older or newer one) and
   * returns the version now installed. Never migrates down: when a newer build migrated the schema
   * (see {@link SchemaWindow#newerThanBuild}), Flyway does not run at all, since it would apply
   * this build's older repeatable migrations over the newer functions; whether this build may run
   * on that schema is the window's question, asked after.
   */
  public static String migrate(DataSource dataSource, BuildVersion build) {
    // A datasource wrapped for a schema (SchemaName#wrap) migrates that schema.
    SchemaName schema = SchemaConnections.schemaOf(dataSource);
    return migrate(dataSource, build, schema == null ? SchemaName.DEFAULT : schema);
  }

  /**
   * Applies the pending migrations in {@code schema}: the same scripts, written against {@code
   * pgbus.}, run over connections that map their text ({@link SchemaName#wrap}). Flyway's checksums
   * are those of the scripts as written, so a database migrated in the default schema validates
   * unchanged, and every schema's history records the same checksums.
   */
  public static String migrate(DataSource dataSource, BuildVersion build, SchemaName schema) {
    dataSource = schema.wrap(dataSource);
    long lock = schema.lockKey(MIGRATION_LOCK);
    try (Connection lockHolder = dataSource.getConnection()) {
      lockHolder.setAutoCommit(true);
      try (PreparedStatement ps =
          lockHolder.prepareStatement("SELECT pg_catalog.pg_advisory_lock(?)")) {
        ps.setLong(1, lock);
        ps.execute();
      }
      try {
        SchemaWindow before = SchemaWindow.read(lockHolder, build);
        if (before.newerThanBuild()) {
          LOG.log(
              System.Logger.Level.INFO,
              "pgbus: not migrating: a newer build migrated the schema ({0})",
              before.message());
          return before.installed();
        }
        Flyway flyway =
            Flyway.configure(Schema.class.getClassLoader())
                .dataSource(new MigrationDataSource(dataSource))
                .schemas(schema.name())
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
                // Each migration waits at most MigrationLockTimeout.TIMEOUT for a lock.
                .callbacks(new MigrationLockTimeout())
                .load();
        MigrateResult result = migrateRetryingLocks(flyway);
        recordMigrator(lockHolder, build);
        return result.targetSchemaVersion != null
            ? result.targetSchemaVersion
            : result.initialSchemaVersion;
      } finally {
        try (PreparedStatement ps =
            lockHolder.prepareStatement("SELECT pg_catalog.pg_advisory_unlock(?)")) {
          ps.setLong(1, lock);
          ps.execute();
        }
      }
    } catch (SQLException e) {
      throw new PgbusException("pgbus could not migrate its schema: " + e.getMessage(), e);
    }
  }

  /**
   * Runs Flyway's migrate, again when a migration gave up a lock ({@link MigrationLockTimeout}): it
   * rolled back whole, so the next run starts from it. Up to {@link #LOCK_ATTEMPTS} runs, a
   * jittered pause between them, in which the writers the migration held up go on.
   */
  private static MigrateResult migrateRetryingLocks(Flyway flyway) {
    for (int attempt = 1; ; attempt++) {
      try {
        return flyway.migrate();
      } catch (FlywayException e) {
        if (!lockTimedOut(e) || attempt >= LOCK_ATTEMPTS) {
          if (lockTimedOut(e)) {
            throw new PgbusException(
                "pgbus could not migrate its schema: a migration waited over "
                    + MigrationLockTimeout.TIMEOUT.toMillis()
                    + " ms for a table lock in each of "
                    + attempt
                    + " attempts (a long transaction on a pgbus table, see pg_stat_activity);"
                    + " the start tries again later",
                e);
          }
          throw e;
        }
        long pause =
            ThreadLocalRandom.current()
                .nextLong(LOCK_RETRY_PAUSE.toMillis() / 2, LOCK_RETRY_PAUSE.toMillis() + 1);
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus: a migration gave up waiting for a table lock after {0} ms and rolled back"
                + " (attempt {1} of {2}); trying again in {3} ms",
            MigrationLockTimeout.TIMEOUT.toMillis(),
            attempt,
            LOCK_ATTEMPTS,
            pause);
        try {
          Thread.sleep(pause);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new PgbusException("pgbus: interrupted while migrating its schema", ie);
        }
      }
    }
  }

  /** Whether a migration failed on lock_timeout (55P03) or as a deadlock's victim (40P01). */
  static boolean lockTimedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s
          && ("55P03".equals(s.getSQLState()) || "40P01".equals(s.getSQLState()))) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /** Runs of the migrations that gave up a lock before the start fails (and is retried). */
  static final int LOCK_ATTEMPTS = 30;

  /** The pause between them: from half of this to this. */
  static final Duration LOCK_RETRY_PAUSE = Duration.ofSeconds(1);

  // Before V25 (a test migrating an older build's files) there is no row to write.
  private static void recordMigrator(Connection c, BuildVersion build) throws SQLException {
    try (PreparedStatement exists = c.prepareStatement(COMPAT_EXISTS);
        ResultSet rs = exists.executeQuery()) {
      rs.next();
      if (!rs.getBoolean(1)) {
        return;
      }
    }
    try (PreparedStatement ps = c.prepareStatement(RECORD_MIGRATOR)) {
      ps.setString(1, build.toString());
      ps.setString(2, build.toString());
      ps.executeUpdate();
    } catch (SQLException e) {
      if (!"42501".equals(e.getSQLState())) {
        throw e;
      }
      // A role that may run the migrations but not write the row (grants narrower than
      // docs/operations.md's): the schema version alone then keeps older builds from migrating
      // down, which covers every release that changes an R__ file with a V file.
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not record build {0} in pgbus.schema_compat.newest_build: {1}; grant the"
              + " migrating role UPDATE on it",
          build,
          e.getMessage());
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

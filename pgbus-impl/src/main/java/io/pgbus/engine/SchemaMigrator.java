package io.pgbus.engine;

import java.io.PrintStream;
import java.util.Map;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Applies pgbus's migrations from the command line, as the schema owner, so that the application's
 * own role needs no right to change the schema ({@code pgbus.migrate=false}, see
 * docs/operations.md, Security):
 *
 * <pre>
 * PGBUS_MIGRATE_URL=jdbc:postgresql://db:5432/pgbus?sslmode=verify-full \
 * PGBUS_MIGRATE_USER=pgbus_owner PGBUS_MIGRATE_PASSWORD=... \
 *   java -cp 'pgbus-lib/*:postgresql.jar' io.pgbus.engine.SchemaMigrator
 * </pre>
 *
 * The password is read from the environment, never from the command line, where {@code ps} would
 * show it.
 */
public final class SchemaMigrator {

  private SchemaMigrator() {}

  public static void main(String[] args) {
    System.exit(run(System.getenv(), System.out, System.err));
  }

  /** Migrates; returns the process exit code. */
  static int run(Map<String, String> env, PrintStream out, PrintStream err) {
    String url = env.get("PGBUS_MIGRATE_URL");
    if (url == null || url.isBlank()) {
      err.println(
          "pgbus: set PGBUS_MIGRATE_URL to the database's JDBC URL (and PGBUS_MIGRATE_USER,"
              + " PGBUS_MIGRATE_PASSWORD to the schema owner's credentials)");
      return 2;
    }
    var ds = new PGSimpleDataSource();
    ds.setUrl(url.strip());
    if (env.get("PGBUS_MIGRATE_USER") != null) {
      ds.setUser(env.get("PGBUS_MIGRATE_USER"));
    }
    if (env.get("PGBUS_MIGRATE_PASSWORD") != null) {
      ds.setPassword(env.get("PGBUS_MIGRATE_PASSWORD"));
    }
    ds.setApplicationName("pgbus-migrate");
    try {
      out.println("pgbus schema is at version " + Schema.migrate(ds));
      return 0;
    } catch (RuntimeException e) {
      err.println("pgbus: migration failed: " + e.getMessage());
      return 1;
    }
  }
}

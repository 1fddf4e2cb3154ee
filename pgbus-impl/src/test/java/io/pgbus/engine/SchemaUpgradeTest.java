package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.SchemaDump;
import io.pgbus.engine.testing.TestDatabase;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The schema's current functions live in repeatable migrations (R__*.sql), its tables and indexes
 * in versioned ones (V*.sql), and a database installed by an older build upgrades cleanly: Flyway
 * validates the checksums of the versioned migrations it applied, so a released one is never
 * edited, and the repeatable ones are applied on top of whatever version a database is at.
 */
class SchemaUpgradeTest {

  /** The last version released before the repeatable migrations existed. */
  static final int LAST_WITHOUT_REPEATABLES = 7;

  /**
   * Flyway's checksums of the released versioned migrations, as installed databases have them in
   * pgbus.schema_history. Editing one of those files fails every such database at its next start
   * ("Migration checksum mismatch"): change the schema in a new V file, or a function in its R
   * file.
   */
  static final Map<String, Integer> RELEASED =
      Map.of(
          "1", -140980457, //
          "2", 155129011,
          "3", -1447930840,
          "4", -720944735,
          "5", 1656699135,
          "6", -481163028,
          "7", -1108576558);

  private static final Pattern DEFINITION =
      Pattern.compile("CREATE OR REPLACE FUNCTION pgbus\\.([a-z_]+)\\(");

  @RegisterExtension static final TestDatabase fresh = TestDatabase.migrated();
  @RegisterExtension static final TestDatabase older = TestDatabase.empty();

  @Test
  void aDatabaseOfTheLastBuildWithoutRepeatableMigrationsUpgradesToWhatAFreshInstallHas(
      @TempDir Path oldBuild) throws Exception {
    // The older build's migrations: the versioned files up to its version, no R__ file.
    try (Stream<Path> files = Files.list(migrations())) {
      for (Path f : files.toList()) {
        Matcher v = Pattern.compile("V(\\d+)__.*\\.sql").matcher(f.getFileName().toString());
        if (v.matches() && Integer.parseInt(v.group(1)) <= LAST_WITHOUT_REPEATABLES) {
          Files.copy(f, oldBuild.resolve(f.getFileName()));
        }
      }
    }
    Flyway.configure()
        .dataSource(older.dataSource())
        .schemas("pgbus")
        .createSchemas(true)
        .table("schema_history")
        .locations("filesystem:" + oldBuild)
        .load()
        .migrate();
    try (Connection c = older.connect()) {
      assertThat(Schema.installedVersion(c)).isEqualTo(String.valueOf(LAST_WITHOUT_REPEATABLES));
    }
    older.queryLong("SELECT pgbus.enqueue('emails', '{\"n\": 1}')");

    assertThat(Schema.migrate(older.dataSource())).isEqualTo(Schema.EXPECTED_VERSION);

    assertThat(
            older.queryLong(
                "SELECT count(*) FROM pgbus.schema_history WHERE type = 'SQL' AND version IS NULL"))
        .as("the repeatable migrations were applied")
        .isEqualTo(repeatableFiles().size());
    assertThat(older.jobCount("emails", "available")).isEqualTo(1);
    String upgraded = SchemaDump.of(older);
    String installed = SchemaDump.of(fresh);
    assertThat(upgraded)
        .as(
            "the upgraded schema differs from a fresh install (- fresh, + upgraded):%n%s",
            SchemaDumpTest.diff(installed, upgraded))
        .isEqualTo(installed);
  }

  @Test
  void releasedMigrationsAreNeverEdited() {
    var installed = new TreeMap<String, Integer>();
    for (String version : RELEASED.keySet()) {
      installed.put(
          version,
          (int)
              fresh.queryLong(
                  "SELECT checksum FROM pgbus.schema_history WHERE version = ?", version));
    }
    assertThat(installed)
        .as(
            "a released V file was edited; Flyway refuses every database that applied the old one."
                + " Restore it and put the change into a new V file (or a function's R__ file)")
        .isEqualTo(new TreeMap<>(RELEASED));
  }

  @Test
  void theInstalledVersionIsTheLastVersionedMigrationEvenAfterRepeatableOnes() throws Exception {
    assertThat(
            fresh.queryLong(
                "SELECT count(*) FROM pgbus.schema_history WHERE installed_rank ="
                    + " (SELECT max(installed_rank) FROM pgbus.schema_history) AND version IS NULL"))
        .as("a repeatable migration is the last row")
        .isEqualTo(1);
    try (Connection c = fresh.connect()) {
      assertThat(Schema.installedVersion(c)).isEqualTo(Schema.EXPECTED_VERSION);
    }
  }

  @Test
  void everyFunctionHasItsOneCurrentDefinitionInARepeatableMigration() throws Exception {
    var definedIn = new LinkedHashMap<String, List<String>>();
    for (Path f : repeatableFiles()) {
      Matcher m = DEFINITION.matcher(Files.readString(f, StandardCharsets.UTF_8));
      while (m.find()) {
        definedIn.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(fileName(f));
      }
    }
    var functions = new ArrayList<String>();
    try (Connection c = fresh.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT p.proname FROM pg_catalog.pg_proc p"
                    + " JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
                    + " WHERE n.nspname = 'pgbus' ORDER BY p.proname");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        functions.add(rs.getString(1));
      }
    }
    assertThat(functions).as("one function per name (no overloads)").doesNotHaveDuplicates();
    for (String f : functions) {
      assertThat(definedIn.getOrDefault(f, List.of()))
          .as(
              "pgbus.%s: its current definition belongs in exactly one R__*.sql file"
                  + " (CREATE OR REPLACE FUNCTION pgbus.%s(...)); see docs/schema.md",
              f, f)
          .hasSize(1);
    }
    assertThat(definedIn.keySet()).containsExactlyInAnyOrderElementsOf(functions);
  }

  @Test
  void aRepeatableMigrationWhoseFileIsGoneDoesNotStopTheMigration() {
    // A later build may merge or rename an R__ file; the row of the old one stays behind.
    fresh.update(
        "INSERT INTO pgbus.schema_history (installed_rank, version, description, type, script,"
            + " checksum, installed_by, execution_time, success)"
            + " SELECT max(installed_rank) + 1, NULL, 'gone', 'SQL', 'R__gone.sql', 42, 'test', 0,"
            + " true FROM pgbus.schema_history");

    assertThat(Schema.migrate(fresh.dataSource())).isEqualTo(Schema.EXPECTED_VERSION);
  }

  private static Path migrations() throws URISyntaxException {
    return Path.of(Schema.class.getResource("/io/pgbus/db/migration").toURI());
  }

  private static List<Path> repeatableFiles() throws IOException, URISyntaxException {
    try (Stream<Path> files = Files.list(migrations())) {
      return files.filter(f -> fileName(f).matches("R__.*\\.sql")).sorted().toList();
    }
  }

  private static String fileName(Path f) {
    return f.getFileName().toString();
  }
}

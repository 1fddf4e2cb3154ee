package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The compatibility window (issue #25): a build runs on its own schema version and on later ones
 * that still serve it, never migrates a newer build's schema down, and says outside its window
 * which versions disagree and what to deploy.
 */
class SchemaWindowTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension static final TestDatabase old = TestDatabase.empty();

  private static final BuildVersion NEWER = new BuildVersion(99, 0, 0);

  @Test
  void thisBuildRunsOnItsOwnSchemaAndRecordsItselfAsTheMigrator() throws Exception {
    try (Connection c = db.connect()) {
      SchemaWindow w = SchemaWindow.read(c);
      assertThat(w.installed()).isEqualTo(Schema.EXPECTED_VERSION);
      assertThat(w.inside()).isTrue();
      assertThat(w.oldestServed()).isEqualTo(new BuildVersion(0, 1, 0));
      assertThat(w.newestMigrator()).isEqualTo(BuildVersion.current());
      assertThat(w.newerThanBuild()).isFalse();
    }
  }

  @Test
  void anOlderBuildOnASchemaANewerBuildMigratedRunsAndNeverMigratesItDown() throws Exception {
    // A newer build applied an expand migration (V<n+1>) and changed a repeatable migration: its
    // row's checksum is not this build's, so Flyway, if it ran, would apply this build's file
    // over it and add a history row.
    db.update(
        "INSERT INTO pgbus.schema_history (installed_rank, version, description, type, script,"
            + " checksum, installed_by, execution_time, success)"
            + " SELECT max(installed_rank) + 1, ?, 'future expand', 'SQL', 'V' || ? ||"
            + " '__future_expand.sql', 7, 'test', 0, true FROM pgbus.schema_history",
        next(),
        next());
    db.update(
        "UPDATE pgbus.schema_history SET checksum = checksum + 1 WHERE script = 'R__names.sql'");
    db.update("UPDATE pgbus.schema_compat SET newest_build = ?", NEWER.toString());
    long rows = db.queryLong("SELECT count(*) FROM pgbus.schema_history");
    try {
      assertThat(Schema.migrate(db.dataSource())).isEqualTo(next());

      assertThat(db.queryLong("SELECT count(*) FROM pgbus.schema_history"))
          .as("Flyway did not run: no repeatable migration applied again")
          .isEqualTo(rows);
      try (Connection c = db.connect()) {
        SchemaWindow w = SchemaWindow.read(c);
        assertThat(w.inside()).as(w.message()).isTrue();
        assertThat(w.newerThanBuild()).isTrue();
        assertThat(w.explain()).contains("version " + next()).contains("pgbus " + NEWER);
      }
    } finally {
      db.update("DELETE FROM pgbus.schema_history WHERE version = ?", next());
      db.update(
          "UPDATE pgbus.schema_history SET checksum = checksum - 1 WHERE script = 'R__names.sql'");
      db.update("UPDATE pgbus.schema_compat SET newest_build = ?", BuildVersion.current() + "");
    }
  }

  @Test
  void aBuildOlderThanTheOldestTheSchemaServesIsOutsideAndNamesBothVersionsAndTheFix()
      throws Exception {
    db.update("UPDATE pgbus.schema_compat SET oldest_build = ?", NEWER.toString());
    try (Connection c = db.connect()) {
      SchemaWindow w = SchemaWindow.read(c);
      assertThat(w.problem()).isEqualTo(DatabaseProblem.SCHEMA_TOO_NEW);
      assertThat(w.message())
          .contains("serves pgbus 99.0.0 and later")
          .contains("this build (pgbus " + BuildVersion.current() + ")")
          .contains("deploy pgbus 99.0.0 or later");
    } finally {
      db.update("UPDATE pgbus.schema_compat SET oldest_build = '0.1.0'");
    }
  }

  @Test
  void aNewerBuildMigratesAndRecordsItselfAndThisBuildThenLeavesTheSchemaAlone() throws Exception {
    try {
      Schema.migrate(db.dataSource(), NEWER);
      assertThat(newestBuild()).isEqualTo(NEWER.toString());
      long rows = db.queryLong("SELECT count(*) FROM pgbus.schema_history");
      db.update(
          "UPDATE pgbus.schema_history SET checksum = checksum + 1 WHERE script = 'R__names.sql'");

      Schema.migrate(db.dataSource());

      assertThat(newestBuild()).as("an older build does not record itself").isEqualTo("99.0.0");
      assertThat(db.queryLong("SELECT count(*) FROM pgbus.schema_history")).isEqualTo(rows);
    } finally {
      db.update(
          "UPDATE pgbus.schema_history SET checksum = checksum - 1 WHERE script = 'R__names.sql'");
      db.update("UPDATE pgbus.schema_compat SET newest_build = ?", BuildVersion.current() + "");
    }
  }

  @Test
  void aSchemaBehindThisBuildIsOutdatedAndMigratingBringsItIntoTheWindow() throws Exception {
    // The newest migration before this build's: numbers reserved for work on other branches may
    // leave a gap below EXPECTED_VERSION.
    int expected = Integer.parseInt(Schema.EXPECTED_VERSION);
    int previous =
        java.util.Arrays.stream(
                Flyway.configure()
                    .dataSource(old.dataSource())
                    .schemas("pgbus")
                    .table("schema_history")
                    .locations("classpath:io/pgbus/db/migration")
                    .load()
                    .info()
                    .all())
            .filter(m -> m.getVersion() != null)
            .mapToInt(m -> m.getVersion().getMajor().intValue())
            .filter(v -> v < expected)
            .max()
            .orElseThrow();
    Flyway.configure()
        .dataSource(old.dataSource())
        .schemas("pgbus")
        .createSchemas(true)
        .table("schema_history")
        .locations("classpath:io/pgbus/db/migration")
        .target(String.valueOf(previous))
        .load()
        .migrate();
    try (Connection c = old.connect()) {
      SchemaWindow w = SchemaWindow.read(c);
      assertThat(w.problem()).isEqualTo(DatabaseProblem.SCHEMA_OUTDATED);
      assertThat(w.message())
          .contains("at version " + previous)
          .contains("runs on schema version " + Schema.EXPECTED_VERSION)
          .contains("pgbus.migrate=true");
    }

    assertThat(Schema.migrate(old.dataSource())).isEqualTo(Schema.EXPECTED_VERSION);

    try (Connection c = old.connect()) {
      assertThat(SchemaWindow.read(c).inside()).isTrue();
    }
  }

  @Test
  void buildVersionsCompareByTheirNumbersAndDropTheQualifier() {
    assertThat(BuildVersion.parse("0.2.0-SNAPSHOT")).isEqualTo(new BuildVersion(0, 2, 0));
    assertThat(BuildVersion.parse("0.10.0")).isGreaterThan(BuildVersion.parse("0.9.9"));
    assertThat(BuildVersion.parse("1.0.0").olderThan(BuildVersion.parse("1.0.1"))).isTrue();
    assertThatThrownBy(() -> BuildVersion.parse("1.0"))
        .hasMessageContaining("major.minor.patch")
        .hasMessageContaining("1.0");
    assertThatThrownBy(() -> BuildVersion.parse("1234567.0.0"))
        .hasMessageContaining("not a pgbus build version");
    assertThatThrownBy(() -> db.update("UPDATE pgbus.schema_compat SET oldest_build = '1.0'"))
        .hasStackTraceContaining("schema_compat_oldest_build_check");
  }

  private static String next() {
    return String.valueOf(Integer.parseInt(Schema.EXPECTED_VERSION) + 1);
  }

  private static String newestBuild() throws Exception {
    try (Connection c = db.helperConnection();
        PreparedStatement ps = c.prepareStatement("SELECT newest_build FROM pgbus.schema_compat");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }
}

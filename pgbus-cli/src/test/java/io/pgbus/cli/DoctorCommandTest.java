package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** pgbus doctor: the database's checks, exit 1 on a FAIL (and with --strict on a WARN). */
class DoctorCommandTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.queue_pause");

  private final CliRunner cli = new CliRunner(db);

  @Test
  void aHealthyDatabaseExitsZeroWithEveryCheck() {
    CliRunner.Result r = cli.run("doctor");
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out())
        .contains("[OK] database: PostgreSQL")
        .contains("[OK] schema:")
        .contains("paused queues")
        .contains("transaction horizon");
  }

  @Test
  void aPausedQueueWarnsAndStrictTurnsTheWarningIntoExitOne() {
    assertThat(cli.run("pause", "mail", "--yes").exit()).isZero();
    CliRunner.Result r = cli.run("doctor", "--json");
    assertThat(r.exit()).isZero();
    assertThat(r.out())
        .startsWith("{\"status\":\"WARN\",\"checks\":[")
        .contains("{\"name\":\"paused queues\",\"status\":\"WARN\",\"detail\":\"paused: [mail]");
    assertThat(cli.run("doctor", "--strict").exit()).isEqualTo(1);
  }

  @Test
  void aDatabaseWithoutTheSchemaFails() {
    CliRunner.Result r =
        new CliRunner(null)
            .env("PGBUS_CLI_URL", db.jdbcUrl().replace("/" + db.name(), "/postgres"))
            .run("doctor");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.out()).contains("[FAIL] schema: the pgbus schema is missing");
  }
}

package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.Schema;
import io.pgbus.engine.testing.TestDatabase;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * pgbus migrate on an empty database, then pgbus check: the schema window and the deploy gate. In
 * order: the first test finds no schema.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MigrateAndCheckTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  private final CliRunner cli = new CliRunner(db);

  @Test
  @Order(1)
  void checkFailsWithoutASchema() {
    CliRunner.Result r = cli.run("check");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.out()).contains("schema: FAIL: the pgbus schema is missing");
  }

  @Test
  @Order(2)
  void migrateCreatesTheSchemaAndASecondRunChangesNothing() {
    CliRunner.Result r = cli.run("migrate");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .startsWith("created the pgbus schema at version " + Schema.EXPECTED_VERSION);
    CliRunner.Result again = cli.run("migrate", "--json");
    assertThat(again.exit()).isZero();
    assertThat(again.out())
        .contains("\"before\":\"" + Schema.EXPECTED_VERSION + "\"")
        .contains("\"after\":\"" + Schema.EXPECTED_VERSION + "\"")
        .contains("\"inside\":true");
  }

  @Test
  @Order(3)
  void checkPassesOnTheMigratedSchema() {
    CliRunner.Result r = cli.run("check", "--json");
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    assertThat(r.out()).startsWith("{\"ok\":true,").contains("\"findings\":[]");
  }

  @Test
  @Order(4)
  void checkFailsForABuildTheSchemaNoLongerServes() {
    db.update("UPDATE pgbus.schema_compat SET oldest_build = '0.2.0'");
    try {
      CliRunner.Result r = cli.run("check", "--build", "0.1.0");
      assertThat(r.exit()).isEqualTo(1);
      assertThat(r.out()).contains("serves pgbus 0.2.0 and later only");
    } finally {
      db.update("UPDATE pgbus.schema_compat SET oldest_build = '0.1.0'");
    }
    assertThat(cli.run("check", "--build", "zero").err()).contains("not a pgbus build version");
  }

  @Test
  @Order(5)
  void theDeployGateFailsOnAQueueNoBuildReadsUntilTheBuildHandlesIt() {
    assertThat(cli.run("enqueue", "orphans", "{}").exit()).isZero();
    CliRunner.Result blocked = cli.run("check");
    assertThat(blocked.exit()).isEqualTo(1);
    assertThat(blocked.out()).contains("deploy gate: FAIL").contains("queue 'orphans'");
    CliRunner.Result handled = cli.run("check", "--handles", "orphans,mail");
    assertThat(handled.exit()).as(handled.out()).isZero();
    CliRunner.Result byCapsule =
        cli.run(
            "check", "--set", "pgbus.capsules=main", "--set", "pgbus.capsule.main.queues=orphans");
    assertThat(byCapsule.exit()).as(byCapsule.out() + byCapsule.err()).isZero();
    assertThat(byCapsule.out()).contains("deploy gate: OK");
  }

  @Test
  @Order(6)
  void anotherSchemaIsMigratedAndWorkedOnWithSchema() {
    CliRunner.Result r = cli.run("migrate", "--schema", "tenant_c");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM \"tenant_c\".schema_history")).isPositive();
    long before = db.queryLong("SELECT count(*) FROM pgbus.job_all");
    assertThat(cli.run("enqueue", "mail", "{}", "--schema", "tenant_c").exit()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM \"tenant_c\".job WHERE queue = 'mail'"))
        .isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_all")).isEqualTo(before);
    CliRunner.Result bad = cli.run("queues", "--schema", "Tenant-C");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).contains("pgbus.schema=Tenant-C is not an SQL identifier");
  }
}

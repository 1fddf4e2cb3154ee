package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** pgbus explain: against pgbus.explain once the explain work has added it (issue #28). */
class ExplainCommandTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause", "pgbus.audit");

  private final CliRunner cli = new CliRunner(db);

  private static void assumeExplain() throws SQLException {
    assumeTrue(
        CliRunner.hasFunction(db, Diagnosis.EXPLAIN_FUNCTION),
        Diagnosis.EXPLAIN_FUNCTION + " is missing: it comes with the explain work (issue #28)");
  }

  @Test
  void aJobIdThatIsNoNumberExitsTwoNamingIt() {
    CliRunner.Result r = cli.run("explain", "12x");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("12x");
    assertThat(cli.run("explain").exit()).isEqualTo(2);
  }

  @Test
  void aMissingJobExitsTwoWithAClearError() throws SQLException {
    assumeExplain();
    CliRunner.Result r = cli.run("explain", "999999");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("no job 999999");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aJobInAPausedQueueIsExplainedWithItsReason() throws SQLException {
    assumeExplain();
    CliRunner.Result enqueued = cli.run("enqueue", "mail", "{}", "--json");
    String id = enqueued.out().replaceAll(".*\"id\":\"(\\d+)\".*\\s*", "$1");
    cli.run("pause", "mail", "--yes");
    CliRunner.Result json = cli.run("explain", id, "--json");
    assertThat(json.exit()).as(json.err()).isZero();
    assertThat(json.out())
        .contains("\"job\":" + id)
        .contains("\"queue\":\"mail\"")
        .contains("\"reasons\":[{");
    CliRunner.Result human = cli.run("explain", id);
    assertThat(human.exit()).isZero();
    assertThat(human.out()).startsWith("job " + id + " (queue mail): available").contains("  1. ");
  }

  @Test
  void withoutTheFunctionTheErrorSaysToMigrate() throws Exception {
    CliRunner.withoutFunction(
        db,
        Diagnosis.EXPLAIN_FUNCTION,
        () -> {
          CliRunner.Result r = cli.run("explain", "1");
          assertThat(r.exit()).isEqualTo(1);
          assertThat(r.err())
              .contains("pgbus.explain(bigint) is missing")
              .contains("pgbus migrate");
        });
  }
}

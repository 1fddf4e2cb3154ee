package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** pgbus queues: depth per state and pause now; runnable and blocked once queue_blockers exists. */
class QueuesCommandTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause", "pgbus.audit");

  private final CliRunner cli = new CliRunner(db);

  @Test
  void showsEachQueuesDepthAndPauseAsATable() {
    cli.run("enqueue", "mail", "{}");
    cli.run("enqueue", "mail", "{}");
    cli.run("enqueue", "reports", "{}", "--delay", "1h");
    cli.run("pause", "reports", "--yes");
    CliRunner.Result r = cli.run("queues");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out().lines().toList())
        .first()
        .asString()
        .startsWith("QUEUE")
        .contains("PAUSED", "SCHEDULED", "AVAILABLE", "RUNNABLE", "BLOCKED");
    assertThat(r.out()).containsPattern("(?m)^mail\\s+no\\s+0\\s+2\\s");
    assertThat(r.out()).containsPattern("(?m)^reports\\s+yes\\s+1\\s+0\\s");
  }

  @Test
  void writesTheDepthAsJson() {
    cli.run("enqueue", "mail", "{}");
    CliRunner.Result r = cli.run("queues", "mail", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .startsWith(
            "{\"countCap\":"
                + io.pgbus.admin.JobAdmin.COUNT_CAP
                + ",\"queues\":[{\"queue\":\"mail\",\"paused\":false,")
        .contains("\"available\":1")
        .contains("\"countsCapped\":[]");
  }

  @Test
  void aQueueWithoutJobsIsShownWithZeros() {
    CliRunner.Result r = cli.run("queues", "empty", "--json");
    assertThat(r.exit()).isZero();
    assertThat(r.out()).contains("\"queue\":\"empty\"").contains("\"available\":0");
  }

  @Test
  void aBadQueueNameExitsTwo() {
    CliRunner.Result r = cli.run("queues", "no such queue");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("no such queue");
  }

  @Test
  void givesRunnableNowAndBlockedByCauseFromQueueBlockers() throws SQLException {
    assumeTrue(
        CliRunner.hasFunction(db, Diagnosis.BLOCKERS_FUNCTION),
        Diagnosis.BLOCKERS_FUNCTION + " is missing: it comes with the explain work (issue #28)");
    cli.run("enqueue", "mail", "{}");
    cli.run("enqueue", "paused", "{}");
    cli.run("pause", "paused", "--yes");
    CliRunner.Result r = cli.run("queues", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .contains("{\"queue\":\"mail\"")
        .containsPattern("\"queue\":\"mail\".*?\"runnableNow\":1")
        .containsPattern(
            "\"queue\":\"paused\".*?\"runnableNow\":0,\"blocked\":\\{\"[a-z_]+\":1\\}");
  }

  @Test
  void withoutQueueBlockersTheDepthIsShownAndTheRestLeftOutWithANote() throws Exception {
    cli.run("enqueue", "mail", "{}");
    CliRunner.withoutFunction(
        db,
        Diagnosis.BLOCKERS_FUNCTION,
        () -> {
          CliRunner.Result r = cli.run("queues", "--json");
          assertThat(r.exit()).isZero();
          assertThat(r.out()).contains("\"runnableNow\":null");
          assertThat(r.err())
              .contains("pgbus.queue_blockers(text) is missing")
              .contains("pgbus migrate");
        });
  }
}

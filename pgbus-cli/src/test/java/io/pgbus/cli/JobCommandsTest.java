package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** enqueue, pause, resume, replay and retry against a real database, with their audit entries. */
class JobCommandsTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause", "pgbus.audit");

  private final CliRunner cli = new CliRunner(db);

  private static final String ACTOR_LIKE = "cli:" + System.getProperty("user.name") + " (role %";

  @Test
  void enqueueInsertsTheJobAsTheOsUserAndRole() {
    CliRunner.Result r =
        cli.run("enqueue", "mail", "{\"to\":\"a@example.com\"}", "--priority", "-5", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    long id = Long.parseLong(r.out().replaceAll(".*\"id\":\"(\\d+)\".*\\s*", "$1"));
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE id = ? AND queue = 'mail' AND priority = -5"
                    + " AND payload = '{\"to\":\"a@example.com\"}' AND enqueued_by LIKE ?",
                id,
                ACTOR_LIKE))
        .isEqualTo(1);
    assertThat(r.out()).contains("\"duplicate\":false");
  }

  @Test
  void enqueueWithATakenUniqueKeyNamesTheWaitingJob() {
    CliRunner.Result first = cli.run("enqueue", "mail", "{}", "--unique-key", "k1");
    CliRunner.Result second = cli.run("enqueue", "mail", "{}", "--unique-key", "k1");
    assertThat(first.exit()).isZero();
    assertThat(second.exit()).isZero();
    assertThat(second.out()).contains("holds unique key 'k1'").contains("nothing enqueued");
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void enqueueRefusesBadInputWithExitTwoNamingIt() {
    assertThat(cli.run("enqueue", "mail", "{not json").err())
        .contains("the payload {not json is not one JSON value");
    assertThat(cli.run("enqueue", "mail", "{}", "--priority", "500").exit()).isEqualTo(2);
    assertThat(cli.run("enqueue", "bad queue!", "{}").exit()).isEqualTo(2);
    assertThat(cli.run("enqueue", "mail", "{}", "--run-at", "tomorrow").err())
        .contains("--run-at tomorrow is not an instant");
    CliRunner.Result big =
        cli.run(
            "enqueue",
            "mail",
            "{\"a\":\"" + "x".repeat(200) + "\"}",
            "--set",
            "pgbus.max-payload-bytes=100");
    assertThat(big.exit()).isEqualTo(2);
    assertThat(big.err()).contains("over the limit of 100 bytes");
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void serverKeysComeFromTheEnvironmentByMicroProfilesMapping() {
    CliRunner.Result r =
        new CliRunner(db)
            .env("PGBUS_MAX_PAYLOAD_BYTES", "10")
            .run("enqueue", "mail", "{\"to\":\"a@example.com\"}");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("over the limit of 10 bytes").contains("pgbus.max-payload-bytes");
  }

  @Test
  void thePasswordFileMustBeReadableAndSmall(@TempDir Path dir) throws IOException {
    CliRunner.Result missing = cli.run("queues", "--password-file", dir.resolve("none").toString());
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err())
        .contains("--password-file " + dir.resolve("none") + " cannot be read");
    Path big =
        Files.writeString(dir.resolve("big"), "x".repeat(CliConfig.MAX_PASSWORD_FILE_BYTES + 1));
    assertThat(cli.run("queues", "--password-file", big.toString()).err())
        .contains("a password file holds the password alone");
    Path good = Files.writeString(dir.resolve("pw"), "secret\n");
    assertThat(cli.run("queues", "--password-file", good.toString()).exit()).isZero();
  }

  @Test
  void pauseRefusesWithoutYesWhenStdinIsNotATerminal() {
    CliRunner.Result r = cli.run("pause", "mail");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err())
        .contains("refusing to pause queue 'mail' for every JVM without consent")
        .contains("--yes");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause")).isZero();
  }

  @Test
  void pauseWithYesPausesForEveryJvmAndAuditsTheOsUserAndRole() {
    CliRunner.Result r = cli.run("pause", "mail", "--yes", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .isEqualToIgnoringNewLines(
            "{\"queue\":\"mail\",\"action\":\"pause\",\"changed\":true,\"paused\":true}");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'pause' AND queue = 'mail'"
                    + " AND actor LIKE ?",
                ACTOR_LIKE))
        .isEqualTo(1);
    CliRunner.Result resumed = cli.run("resume", "mail");
    assertThat(resumed.exit()).isZero();
    assertThat(resumed.out()).contains("queue 'mail' resumed");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause")).isZero();
  }

  @Test
  void atATerminalPauseAsksAndGoesOnOnlyOnYes() {
    CliRunner.Result declined = new CliRunner(db).atTerminal("no\n").run("pause", "mail");
    assertThat(declined.exit()).isEqualTo(1);
    assertThat(declined.err()).contains("Type yes").contains("nothing was changed");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause")).isZero();
    CliRunner.Result agreed = new CliRunner(db).atTerminal("yes\n").run("pause", "mail");
    assertThat(agreed.exit()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause")).isEqualTo(1);
  }

  @Test
  void replayByIdGivesADeadJobAFreshBudgetAndAuditsIt() {
    long dead = enqueue("mail");
    db.update("UPDATE pgbus.job SET state = 'dead', finalized_at = now() WHERE id = ?", dead);
    CliRunner.Result refused = cli.run("replay", String.valueOf(dead));
    assertThat(refused.exit()).isEqualTo(2);
    assertThat(db.job(dead).state()).isEqualTo("dead");
    CliRunner.Result r = cli.run("replay", String.valueOf(dead), "--yes", "--json");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).isEqualToIgnoringNewLines("{\"action\":\"replay\",\"changed\":1}");
    assertThat(db.job(dead).state()).isEqualTo("available");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'replay' AND job_id = ?"
                    + " AND actor LIKE ?",
                dead,
                ACTOR_LIKE))
        .isEqualTo(1);
  }

  @Test
  void replayOfAJobThatIsNotDeadExitsOneNamingItsState() {
    long waiting = enqueue("mail");
    CliRunner.Result r = cli.run("replay", String.valueOf(waiting), "--yes");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("job " + waiting + " is available: replay takes dead jobs");
  }

  @Test
  void aMissingJobExitsTwo() {
    CliRunner.Result r = cli.run("replay", "999999", "--yes");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("no job 999999");
    assertThat(cli.run("retry", "abc", "--yes").err()).contains("abc");
  }

  @Test
  void retryByFilterRunsTheQueuesScheduledJobsNowWithinTheLimit() {
    for (int i = 0; i < 3; i++) {
      cli.run("enqueue", "reports", "{}", "--delay", "1h");
    }
    enqueue("mail");
    CliRunner.Result r = cli.run("retry", "--queue", "reports", "--limit", "2", "--yes");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("retry: 2 job(s) changed");
    assertThat(db.jobCount("reports", "available")).isEqualTo(2);
    assertThat(db.jobCount("reports", "scheduled")).isEqualTo(1);
  }

  @Test
  void bulkActionsKeepTheAdminApisBoundsAndNeedAFilterOrAll() {
    assertThat(cli.run("retry", "--queue", "q", "--limit", "0", "--yes").exit()).isEqualTo(2);
    CliRunner.Result over = cli.run("retry", "--queue", "q", "--limit", "10001", "--yes");
    assertThat(over.exit()).isEqualTo(2);
    assertThat(over.err()).contains("10001");
    assertThat(cli.run("retry", "--state", "bogus", "--yes").exit()).isEqualTo(2);
    CliRunner.Result none = cli.run("retry", "--yes");
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err()).contains("needs a job id or a filter");
    assertThat(cli.run("retry", "--queue", "q").exit()).as("no --yes, no terminal").isEqualTo(2);
  }

  private long enqueue(String queue) {
    CliRunner.Result r = cli.run("enqueue", queue, "{}");
    assertThat(r.exit()).as(r.err()).isZero();
    return Long.parseLong(r.out().replaceAll("\\D*(\\d+).*\\s*", "$1"));
  }
}

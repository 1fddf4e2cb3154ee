package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Usage errors exit 2 with a line that names the bad value and the fix; help exits 0. */
class UsageTest {

  private final CliRunner cli = new CliRunner(null);

  /** A database that does not answer: commands that check input first never reach it. */
  private final CliRunner nowhere =
      new CliRunner(null)
          .env("PGBUS_CLI_URL", "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=2");

  @Test
  void anUnknownCommandExitsTwoAndListsTheCommands() {
    CliRunner.Result r = cli.run("frobnicate");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("unknown command 'frobnicate'").contains("explain, enqueue");
  }

  @Test
  void anUnknownFlagIsNamedWithTheFlagsTheCommandTakes() {
    CliRunner.Result r = cli.run("replay", "--queu", "mail");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("unknown flag --queu for pgbus replay").contains("--queue");
  }

  @Test
  void everyCommandHasHelpThatExitsZero() {
    for (Command c : Cli.COMMANDS) {
      CliRunner.Result r = cli.run(c.name(), "--help");
      assertThat(r.exit()).as(c.name()).isZero();
      assertThat(r.out()).as(c.name()).startsWith("usage: pgbus " + c.name()).contains("--json");
    }
    assertThat(cli.run("--help").out()).contains("migrate").contains("retry");
    assertThat(cli.run("help", "explain").out()).startsWith("usage: pgbus explain <job id>");
  }

  @Test
  void noArgumentsPrintTheOverviewAndExitTwo() {
    CliRunner.Result r = cli.run();
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.out()).contains("commands:");
  }

  @Test
  void aPasswordFlagIsRefusedNamingTheSafeWays() {
    CliRunner.Result r = cli.run("queues", "--password", "secret");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--password is refused").contains("PGBUS_CLI_PASSWORD");
    assertThat(r.err()).doesNotContain("secret");
  }

  @Test
  void aUrlWithAPasswordOnTheCommandLineIsRefused() {
    CliRunner.Result r =
        cli.run("queues", "--url", "jdbc:postgresql://127.0.0.1/x?user=a&password=hunter2");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--url carries a password").doesNotContain("hunter2");
  }

  @Test
  void withoutADatabaseTheErrorNamesTheFlagAndTheVariable() {
    CliRunner.Result r = cli.run("queues");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--url").contains("PGBUS_CLI_URL");
  }

  @Test
  void aBadSettingIsRefusedAsTheServersRefuseIt() {
    CliRunner.Result r = nowhere.run("doctor", "--set", "pgbus.max-payload-bytes=lots");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("pgbus.max-payload-bytes=lots is invalid");
  }

  @Test
  void aMisspelledKeyIsRefusedWithTheNearestKey() {
    CliRunner.Result r = nowhere.run("doctor", "--set", "pgbus.max-payload-byte=100");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("did you mean pgbus.max-payload-bytes");
  }

  @Test
  void anUnreachableDatabaseExitsOne() {
    CliRunner.Result r = nowhere.run("queues");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("the database failed").contains("check --url");
  }

  @Test
  void theActorNamesTheOsUserAndTheRoleWithoutControlCharacters() {
    assertThat(Database.actor("alice", "pgbus_admin")).isEqualTo("cli:alice (role pgbus_admin)");
    assertThat(Database.actor("eve\nforged", "r")).isEqualTo("cli:eve?forged (role r)");
    assertThat(Database.actor("x".repeat(400), "r")).hasSize(Database.MAX_ACTOR);
  }
}

package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The released jar as an operator runs it: {@code java -jar pgbus-cli-<version>.jar} in a child
 * JVM, its stdin a pipe (no terminal), its database from the environment. Proves the shaded jar has
 * what the in-process tests take from the class path: the driver, Flyway's PostgreSQL support and
 * the migrations, a JSON-P provider.
 */
class JarIT {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  /** What the child printed and returned. */
  record Run(int exit, String out, String err) {}

  private static Run jar(String... args) throws IOException, InterruptedException {
    String jar = System.getProperty("pgbus.cli.jar");
    assertThat(jar).as("pgbus.cli.jar (set by the POM's failsafe configuration)").isNotNull();
    assertThat(Path.of(jar)).exists();
    var command = new ArrayList<>(List.of(javaBinary(), "-jar", jar));
    command.addAll(List.of(args));
    Path out = Files.createTempFile("pgbus-cli", ".out");
    Path err = Files.createTempFile("pgbus-cli", ".err");
    try {
      var pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
      pb.environment().put("PGBUS_CLI_URL", db.jdbcUrl());
      Process p = pb.start();
      p.getOutputStream().close();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("pgbus " + String.join(" ", args)).isTrue();
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  @Test
  void theJarMigratesEnqueuesListsAndRefusesAPauseWithoutYes() throws Exception {
    Run migrate = jar("migrate", "--json");
    assertThat(migrate.exit()).as(migrate.err()).isZero();
    assertThat(migrate.out()).contains("\"inside\":true");
    assertThat(migrate.err()).as("Flyway's INFO lines are quieted").doesNotContain("INFO");

    Run enqueue = jar("enqueue", "mail", "{\"n\":1}");
    assertThat(enqueue.exit()).as(enqueue.err()).isZero();
    assertThat(enqueue.out()).startsWith("enqueued job ");

    Run queues = jar("queues", "--json");
    assertThat(queues.exit()).as(queues.err()).isZero();
    assertThat(queues.out()).contains("\"queue\":\"mail\"").contains("\"available\":1");

    Run pause = jar("pause", "mail");
    assertThat(pause.exit()).isEqualTo(2);
    assertThat(pause.err()).contains("stdin is not a terminal");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_pause")).isZero();

    Run missing = jar("replay", "999999", "--yes");
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err()).contains("no job 999999");

    Run doctor = jar("doctor", "--json");
    assertThat(doctor.exit()).as(doctor.out()).isZero();
    assertThat(doctor.out()).startsWith("{\"status\":");
  }
}

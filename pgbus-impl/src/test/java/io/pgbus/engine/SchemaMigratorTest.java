package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The command-line migrator installs the schema, and says what to set when it cannot. */
class SchemaMigratorTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @Test
  void migratesTheDatabaseNamedInTheEnvironment() {
    int code = run(Map.of("PGBUS_MIGRATE_URL", db.jdbcUrl()));
    assertThat(code).as(text(err)).isZero();
    assertThat(text(out)).contains("pgbus schema is at version " + Schema.EXPECTED_VERSION);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job")).isZero();
  }

  @Test
  void withoutAUrlItSaysWhatToSet() {
    assertThat(run(Map.of())).isEqualTo(2);
    assertThat(text(err)).contains("set PGBUS_MIGRATE_URL");
  }

  private int run(Map<String, String> env) {
    return SchemaMigrator.run(
        env,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private static String text(ByteArrayOutputStream s) {
    return s.toString(StandardCharsets.UTF_8);
  }
}

package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.PgbusException;
import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.SchemaWindow;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What readiness shows for a failed start, and what the log gets: the category publicly, the
 * driver's text in the log once per change.
 */
class StartFailureTest {

  @Test
  void aMigrationRefusedForWantOfRightsIsAMigrationFailure() {
    var denied =
        new PgbusException(
            "pgbus could not migrate its schema: permission denied for database pgbus",
            new SQLException("permission denied for database pgbus", "42501"));
    assertThat(StartFailure.categoryOf(StartFailure.migration(denied)))
        .isEqualTo("migration failed");
  }

  @Test
  void aMigrationThatCannotConnectIsUnreachable() {
    var refused =
        new PgbusException(
            "pgbus could not migrate its schema: Connection to db:5432 refused",
            new SQLException("Connection to db:5432 refused", "08001"));
    assertThat(StartFailure.categoryOf(StartFailure.migration(refused)))
        .isEqualTo("database unreachable");
  }

  @Test
  void aMissingOlderOrTooNewSchemaIsNamed() {
    BuildVersion build = BuildVersion.current();
    assertThat(
            StartFailure.categoryOf(
                StartFailure.outsideWindow(new SchemaWindow(null, build, null, null))))
        .isEqualTo("schema missing");
    assertThat(
            StartFailure.categoryOf(
                StartFailure.outsideWindow(new SchemaWindow("3", build, null, null))))
        .isEqualTo("schema outdated");
    var tooNew =
        StartFailure.outsideWindow(
            new SchemaWindow("9999", build, new BuildVersion(99, 0, 0), null));
    assertThat(StartFailure.categoryOf(tooNew)).isEqualTo("schema too new");
    assertThat(tooNew.getMessage()).contains("9999").contains(build.toString()).contains("99.0.0");
  }

  @Test
  void aProblemIsLoggedInFullOncePerChange() {
    var logger = new RecordingLogger();
    var problems = new ProblemLog(logger);
    var refused = new SQLException("Connection to db:5432 refused", "08001");
    problems.seen("start", "database unreachable", refused);
    problems.seen("start", "database unreachable", refused);
    problems.seen("start", "database unreachable", refused);
    problems.seen("start", "authentication failed", new SQLException("password failed", "28P01"));
    problems.solved();
    problems.solved();
    assertThat(logger.levels)
        .containsExactly(
            System.Logger.Level.WARNING,
            System.Logger.Level.DEBUG,
            System.Logger.Level.DEBUG,
            System.Logger.Level.WARNING,
            System.Logger.Level.INFO);
    assertThat(logger.texts).last().isEqualTo("pgbus: solved, no longer authentication failed");
  }

  /** Records the level of each message. */
  private static final class RecordingLogger implements System.Logger {
    final List<Level> levels = new ArrayList<>();
    final List<String> texts = new ArrayList<>();

    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      levels.add(level);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      levels.add(level);
      texts.add(java.text.MessageFormat.format(format, params));
    }

    @Override
    public void log(Level level, Supplier<String> msgSupplier) {
      levels.add(level);
    }
  }
}

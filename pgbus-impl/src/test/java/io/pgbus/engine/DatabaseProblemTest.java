package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.PgbusException;
import java.net.ConnectException;
import java.sql.SQLException;
import org.flywaydb.core.api.FlywayException;
import org.junit.jupiter.api.Test;

/** Failures become short public categories, judged by SQLSTATE and exception type, never text. */
class DatabaseProblemTest {

  @Test
  void connectionFailuresAreUnreachable() {
    assertThat(
            DatabaseProblem.of(new SQLException("Connection to db.internal:5432 refused", "08001")))
        .isEqualTo("database unreachable");
    assertThat(DatabaseProblem.of(new RuntimeException(new ConnectException("refused"))))
        .isEqualTo("database unreachable");
    assertThat(DatabaseProblem.of(new SQLException("the database system is starting up", "57P03")))
        .isEqualTo("database unreachable");
  }

  @Test
  void wrongCredentialsAreAuthenticationFailed() {
    assertThat(
            DatabaseProblem.of(
                new SQLException("password authentication failed for user x", "28P01")))
        .isEqualTo("authentication failed");
  }

  @Test
  void aMissingSchemaOrDatabaseOrGrantIsNamed() {
    assertThat(DatabaseProblem.of(new SQLException("relation pgbus.job does not exist", "42P01")))
        .isEqualTo("schema missing");
    assertThat(DatabaseProblem.of(new SQLException("database x does not exist", "3D000")))
        .isEqualTo("database does not exist");
    assertThat(DatabaseProblem.of(new SQLException("permission denied for table job", "42501")))
        .isEqualTo("permission denied");
  }

  @Test
  void aFlywayFailureWithoutAKnownStateIsAMigrationFailure() {
    assertThat(
            DatabaseProblem.of(
                new PgbusException(
                    "pgbus could not migrate",
                    new FlywayException("Migration V5 failed: SQL State 42601 ..."))))
        .isEqualTo("migration failed");
    assertThat(DatabaseProblem.of(new IllegalStateException("something else")))
        .isEqualTo("database error");
  }
}

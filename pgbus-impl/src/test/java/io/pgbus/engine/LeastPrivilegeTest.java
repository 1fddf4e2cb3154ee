package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import io.pgbus.engine.testing.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The grants of docs/operations.md (Security) are enough: an owner role migrates the schema, and an
 * application role with only those grants enqueues, claims, completes, fails, pauses and runs
 * maintenance (election, rescue, retention) through the engine. Neither role is a superuser.
 */
class LeastPrivilegeTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final String SUFFIX =
      Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 20).toLowerCase(Locale.ROOT);
  private static final String OWNER = "pgbus_test_owner_" + SUFFIX;
  private static final String APP = "pgbus_test_app_" + SUFFIX;
  private static final Duration WAIT = Duration.ofSeconds(20);

  @BeforeAll
  static void rolesAndGrants() throws SQLException {
    try (Connection admin = db.connect();
        Statement st = admin.createStatement()) {
      // Role and database names are made here from [a-z0-9_]: quoting is enough (no binds in DDL).
      st.execute("CREATE ROLE " + OWNER + " LOGIN NOSUPERUSER");
      st.execute("CREATE ROLE " + APP + " LOGIN NOSUPERUSER");
      st.execute("GRANT CREATE, CONNECT ON DATABASE \"" + db.name() + "\" TO " + OWNER);
    }
    Schema.migrate(as(OWNER));
    // As in docs/operations.md, run by the owner.
    try (Connection owner = as(OWNER).getConnection();
        Statement st = owner.createStatement()) {
      st.execute("GRANT CONNECT ON DATABASE \"" + db.name() + "\" TO " + APP);
      st.execute("GRANT USAGE ON SCHEMA pgbus TO " + APP);
      st.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pgbus TO " + APP);
      st.execute("REVOKE INSERT, UPDATE, DELETE ON pgbus.schema_history FROM " + APP);
      st.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgbus TO " + APP);
      st.execute(
          "ALTER DEFAULT PRIVILEGES IN SCHEMA pgbus"
              + " GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "
              + APP);
      st.execute("ALTER DEFAULT PRIVILEGES IN SCHEMA pgbus GRANT EXECUTE ON FUNCTIONS TO " + APP);
    }
  }

  @AfterAll
  static void dropRoles() throws SQLException {
    try (Connection admin = db.connect();
        Statement st = admin.createStatement()) {
      st.execute("DROP OWNED BY " + APP + ", " + OWNER + " CASCADE");
    }
    try (Connection admin = DriverManager.getConnection(TestPostgres.adminUrl());
        Statement st = admin.createStatement()) {
      st.execute("DROP ROLE IF EXISTS " + APP);
      st.execute("DROP ROLE IF EXISTS " + OWNER);
    }
  }

  @Test
  void theApplicationRoleRunsJobsAndMaintenanceWithTheDocumentedGrants() throws Exception {
    var events = new RecordingEvents();
    PGSimpleDataSource app = as(APP);
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .rescueInterval(Duration.ofMillis(100))
                        .pruneInterval(Duration.ofMillis(100))
                        .completedRetention(Duration.ofMillis(1))
                        .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), 0))
                        .capsule("main", 2, "lp_ok", "lp_fail", "lp_rescued")
                        .build(),
                    app)
                .listenerConnections(() -> as(APP).getConnection())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      if (job.queue().equals("lp_fail")) {
                        throw new IllegalStateException("expected failure");
                      }
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(engine);

    var jobs = new JobFixtures(app);
    long ok = jobs.enqueue("lp_ok");
    long failing = jobs.enqueue("lp_fail", EnqueueOptions.defaults().withMaxAttempts(2));
    assertThat(events.awaitFinished(ok, 1, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(events.awaitFinished(failing, 2, WAIT).kind()).as("dead").isNull();
    assertThat(db.job(failing).state()).isEqualTo("dead");

    // A job whose worker died: claimed with a lease that has run out, rescued by the leader.
    long stranded = jobs.enqueue("lp_stranded");
    try (Connection c = app.getConnection()) {
      assertThat(engine.jobs().pause(c, "lp_ok")).isTrue();
      assertThat(engine.jobs().pausedQueues(c)).containsExactly("lp_ok");
      assertThat(engine.jobs().resume(c, "lp_ok")).isTrue();
      new JobStore().jobClaim(c, List.of("lp_stranded"), 1, "dead-jvm", Duration.ofMillis(1));
    }
    Await.until(
        "the leader to rescue the stranded job", WAIT, () -> engine.status().rescued() >= 1);
    assertThat(db.job(stranded).state()).isIn("retryable", "available");
    assertThat(engine.leader()).isTrue();
    // Retention: the completed job is deleted by the leader's prune.
    Await.until(
        "retention to delete the completed job",
        WAIT,
        () -> db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ?", ok) == 0);

    Doctor.Report report = Doctor.examine(engine, app, null, "pool");
    assertThat(report.checks())
        .filteredOn(c -> c.name().equals("schema"))
        .allMatch(c -> c.status() == Doctor.Status.OK);
  }

  @Test
  void theApplicationRoleMayStartWithMigrationOnOnceTheSchemaIsCurrent() {
    assertThat(Schema.migrate(as(APP))).isEqualTo(Schema.EXPECTED_VERSION);
  }

  @Test
  void theApplicationRoleCannotChangeTheSchemaOrItsHistory() {
    assertThatThrownBy(() -> runAs(APP, "DELETE FROM pgbus.schema_history"))
        .hasMessageContaining("permission denied");
    assertThatThrownBy(() -> runAs(APP, "ALTER TABLE pgbus.job ADD COLUMN x int"))
        .hasMessageContaining("must be owner");
    assertThatThrownBy(() -> runAs(APP, "CREATE TABLE pgbus.intruder (x int)"))
        .hasMessageContaining("permission denied");
  }

  private static void runAs(String role, String sql) throws SQLException {
    try (Connection c = as(role).getConnection();
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static PGSimpleDataSource as(String role) {
    var ds = new PGSimpleDataSource();
    ds.setUrl(db.jdbcUrl());
    ds.setUser(role);
    ds.setApplicationName("pgbus-test");
    return ds;
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.PgBouncer;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * pgbus behind a real PgBouncer in transaction mode (issue #33): the pooler is seen with an idle
 * and a busy pool, pgbus's own statements never meet a prepared-statement error, one that happens
 * anyway is a FAIL, a listener through the pooler is degraded at once and names no server
 * connection, and the budget counts what each JVM costs PostgreSQL. Skipped where PgBouncer is not
 * installed ({@link PgBouncer#MISSING}).
 */
class PoolerTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static PgBouncer pgb;

  @BeforeAll
  static void startPgBouncer() throws Exception {
    assumeTrue(PgBouncer.available(), PgBouncer.MISSING);
    var url = new java.net.URI(db.jdbcUrl().substring("jdbc:".length()));
    // One server connection: two clients' named statements meet on it every time.
    pgb = PgBouncer.inFrontOf(url.getHost(), url.getPort()).poolSize(1).start();
  }

  @AfterAll
  static void stopPgBouncer() {
    if (pgb != null) {
      pgb.close();
    }
  }

  private static DataSource pooled() {
    return pgb.dataSource(db.name());
  }

  @Test
  void thePoolerCheckWarnsBehindAnIdlePoolAndABusyOneAndNotOnADirectConnection() throws Exception {
    EngineConfig config = EngineConfig.builder().build();
    var idle = new ArrayList<Doctor.Status>();
    for (int i = 0; i < 5; i++) {
      idle.add(check(Doctor.examineDatabase(pooled(), config), "pooler").status());
    }
    var busy = new ArrayList<Doctor.Status>();
    // A busy pool: another client holds a transaction (and the one server connection) meanwhile.
    try (PgBouncer wide = PgBouncer.inFrontOf("127.0.0.1", port()).poolSize(3).start();
        Connection holder = wide.dataSource(db.name()).getConnection()) {
      holder.setAutoCommit(false);
      holder.createStatement().execute("SELECT 1");
      for (int i = 0; i < 5; i++) {
        busy.add(
            check(Doctor.examineDatabase(wide.dataSource(db.name()), config), "pooler").status());
      }
      holder.rollback();
    }
    Doctor.Check direct = check(Doctor.examineDatabase(db.dataSource(), config), "pooler");

    assertThat(idle).containsOnly(Doctor.Status.WARN);
    assertThat(busy).containsOnly(Doctor.Status.WARN);
    assertThat(direct.status()).isEqualTo(Doctor.Status.OK);
    assertThat(direct.detail()).contains("no transaction-mode pooler");
  }

  @Test
  void pgbusStatementsBehindThePoolerMeetNoPreparedStatementErrorOnceItIsSeen() throws Exception {
    // The trap is real: pgjdbc's defaults, two clients, one server connection.
    List<SQLException> raw = exercise(pooled());
    assertThat(raw).as("errors of unguarded statements").isNotEmpty();
    assertThat(raw).allMatch(PoolerGuard::isFault);

    var guard = new PoolerGuard();
    PoolerGuard.Session seen = guard.inspect(pooled());
    List<SQLException> guarded = exercise(guard.wrap(pooled()));

    assertThat(seen.direct()).isFalse();
    assertThat(guard.unprepared()).isTrue();
    assertThat(guarded).as("errors of guarded statements").isEmpty();
    assertThat(guard.faults()).isZero();
    assertThat(Doctor.preparedStatements(guard).status()).isEqualTo(Doctor.Status.OK);

    var direct = new PoolerGuard();
    assertThat(direct.inspect(db.dataSource()).direct()).isTrue();
    assertThat(direct.unprepared()).isFalse();
  }

  @Test
  void aPreparedStatementErrorMakesTheDoctorFailAndUnpreparesTheNextStatements() throws Exception {
    var guard = new PoolerGuard();
    DataSource wrapped = guard.wrap(pooled()); // not inspected: the pooler is not known yet

    List<SQLException> errors = exercise(wrapped);
    List<SQLException> after = exercise(wrapped);

    assertThat(errors).isNotEmpty();
    assertThat(guard.faults()).isEqualTo(errors.size());
    assertThat(guard.problem()).isEqualTo(PoolerGuard.CATEGORY);
    assertThat(guard.unprepared()).isTrue();
    assertThat(after).as("errors once unprepared").isEmpty();
    Doctor.Check check = Doctor.preparedStatements(guard);
    assertThat(check.status()).isEqualTo(Doctor.Status.FAIL);
    assertThat(check.detail()).startsWith("pooler breaks prepared statements");
    assertThat(check.fix()).contains("prepareThreshold=0");
  }

  @Test
  void aListenerThroughThePoolerIsDegradedWithinTwoSecondsAndNamesNoServerConnection() {
    String url = pgb.jdbcUrl(db.name()) + "&user=postgres";
    long started = System.nanoTime();
    var guard = new PoolerGuard();
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 2, "pooled")
                        .pollInterval(Duration.ofMillis(200))
                        .build(),
                    db.dataSource())
                .listenerConnections(() -> DriverManager.getConnection(url))
                .jobs((job, tx) -> Outcome.complete()));

    Await.until(
        "the listener behind the pooler to be degraded",
        Duration.ofSeconds(5),
        engine::listenerState,
        s -> s == ListenerState.DEGRADED);
    Duration toDegraded = Duration.ofNanos(System.nanoTime() - started);
    long id = JobFixtures.in(db).enqueue("pooled");
    Await.until(
        "the job to complete by polling",
        Duration.ofSeconds(10),
        () ->
            db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'completed'", id),
        n -> n == 1);

    assertThat(toDegraded).isLessThan(Duration.ofSeconds(2));
    assertThat(engine.notifier().lastError()).contains("not a direct session");
    // A pooled server connection named pgbus-listener would stay so. Only this test's database
    // counts: the other test classes, running beside it, have direct listeners of their own.
    Await.until(
        "no server connection named pgbus-listener",
        Duration.ofSeconds(5),
        () ->
            db.queryLong(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = ?"
                    + " AND datname = current_database()",
                Channels.LISTENER_APPLICATION_NAME),
        n -> n == 0);
    assertThat(guard.faults()).isZero();
  }

  @Test
  void theBudgetBehindThePoolerCountsOneDirectConnectionPerJvm() throws Exception {
    var guard = new PoolerGuard();
    guard.inspect(pooled());
    Engine engine =
        engines.start(
            Engine.builder(
                    engines.config().capsule("main", 4, "budget").build(), guard.wrap(pooled()))
                .listenerConnections(engines.listenerConnections())
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    long max = db.queryLong("SELECT current_setting('max_connections')::int");
    long reserved = db.queryLong("SELECT current_setting('superuser_reserved_connections')::int");

    Doctor.Report report = Doctor.examine(engine, guard.wrap(pooled()), 20, "k");

    Doctor.Budget b = report.budget();
    assertThat(b.perJvm()).isEqualTo(1);
    assertThat(b.formula())
        .contains("behind a transaction-mode pooler")
        .contains("without the pooler: N x 21");
    assertThat(b.maxJvms())
        .isGreaterThan((int) ((max - reserved) / 21))
        .isLessThanOrEqualTo((int) (max - reserved));
    assertThat(check(report, "pooler").status()).isEqualTo(Doctor.Status.WARN);
    assertThat(guard.faults()).isZero();
  }

  /** Two clients run one statement six times each, alternately; the errors they met. */
  private static List<SQLException> exercise(DataSource ds) throws SQLException {
    var errors = new ArrayList<SQLException>();
    try (Connection a = ds.getConnection();
        Connection b = ds.getConnection()) {
      for (int i = 0; i < 6; i++) {
        for (Connection c : List.of(a, b)) {
          try (PreparedStatement ps = c.prepareStatement("SELECT pg_catalog.length(?::text)")) {
            ps.setString(1, "q" + i);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
            }
          } catch (SQLException e) {
            errors.add(e);
          }
        }
      }
    }
    return errors;
  }

  private static int port() throws Exception {
    return new java.net.URI(db.jdbcUrl().substring("jdbc:".length())).getPort();
  }

  private static Doctor.Check check(Doctor.Report report, String name) {
    return report.checks().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }
}

package io.pgbus.engine;

import static java.time.Duration.ofSeconds;
import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The doctor's checks and its connection budget for a given configuration. */
class DoctorTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void reportsTheDirectConnectionBudgetForAGivenConfiguration() throws Exception {
    Engine engine =
        engines.start(
            engines.config().capsule("fast", 6, "a", "b").capsule("slow", 2, "c").build(),
            (job, tx) -> null);
    TestEngines.awaitDelivering(engine);
    long maxConnections = db.queryLong("SELECT current_setting('max_connections')::int");
    long reserved = db.queryLong("SELECT current_setting('superuser_reserved_connections')::int");

    Doctor.Report report = Doctor.examine(engine, db.dataSource(), 12, "pool.key");

    Doctor.Budget b = report.budget();
    assertThat(b.listenerPerJvm()).isEqualTo(1);
    assertThat(b.poolMax()).isEqualTo(12);
    assertThat(b.capsuleThreads()).isEqualTo(8);
    assertThat(b.perJvm()).isEqualTo(13);
    assertThat(b.maxJvms()).isEqualTo((int) ((maxConnections - reserved) / 13));
    assertThat(b.formula())
        .contains("per JVM: 1 LISTEN connection")
        .contains("+ 12 (JTA datasource maxPoolSize) = 13")
        .contains("for N JVMs: N x 13");
    assertThat(report.status()).isEqualTo(Doctor.Status.OK);
    assertThat(report.checks())
        .extracting(Doctor.Check::name)
        .containsExactly(
            "config",
            "database",
            "schema",
            "paused queues",
            "flow control",
            "schedules",
            "pooler",
            "transaction horizon",
            "listener",
            "wakes",
            "pool",
            "connection budget");
  }

  @Test
  void saysWhichWakeModeRunsAndWhatOtherNotifyTrafficCosts() {
    Engine coalesced = engines.start(engines.config().build(), (job, tx) -> null);
    Engine inTransaction =
        engines.start(
            engines.config().wakeMode(WakeMode.IN_TRANSACTION).build(), (job, tx) -> null);

    Doctor.Check c = check(Doctor.examine(coalesced, db.dataSource(), 20, "k"), "wakes");
    Doctor.Check t = check(Doctor.examine(inTransaction, db.dataSource(), 20, "k"), "wakes");

    assertThat(c.status()).isEqualTo(Doctor.Status.OK);
    assertThat(c.detail()).startsWith("coalesced: ").contains("any other NOTIFY");
    assertThat(t.detail()).startsWith("in-transaction: ").contains("one at a time");
    var failing = new EngineStatus.Wakes(WakeMode.COALESCED, 3, 3, 0, 1, 1, 2, 0);
    assertThat(Doctor.wakes(failing).status()).isEqualTo(Doctor.Status.WARN);
  }

  @Test
  void warnsAboutPausedQueuesAndSaysHowToResumeThem() throws Exception {
    Engine engine =
        engines.start(
            engines.config().capsule("main", 1, "doctor_paused").build(), (job, tx) -> null);
    try (java.sql.Connection c = db.connect()) {
      engine.jobs().pause(c, "doctor_paused");
      try {
        Doctor.Check paused =
            check(Doctor.examine(engine, db.dataSource(), 20, "k"), "paused queues");

        assertThat(paused.status()).isEqualTo(Doctor.Status.WARN);
        assertThat(paused.detail()).contains("paused: [doctor_paused]").contains("capsules read");
        assertThat(paused.fix()).contains("pgbus.resume('<queue>')");
      } finally {
        engine.jobs().resume(c, "doctor_paused");
      }
    }
  }

  @Test
  void warnsWhileARepeatableReadTransactionElsewhereHoldsTheHorizonBack() throws Exception {
    Engine engine =
        engines.start(
            engines.config().capsule("main", 1, "doctor_horizon").horizonWarn(ofSeconds(1)).build(),
            (job, tx) -> null);
    try (Connection report = db.connect()) {
      report.createStatement().execute("SET application_name = 'nightly report'");
      report.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      report.setAutoCommit(false);
      report.createStatement().execute("SELECT count(*) FROM pgbus.job"); // takes the snapshot
      long pid = ((org.postgresql.PGConnection) report).getBackendPID();

      Doctor.Check held =
          Await.until(
              "the doctor's horizon warning",
              ofSeconds(10),
              () -> check(Doctor.examine(engine, db.dataSource(), 20, "k"), "transaction horizon"),
              c -> c.status() == Doctor.Status.WARN);

      assertThat(held.detail())
          .contains("pid " + pid)
          .contains("application 'nightly report'")
          .contains("idle in transaction")
          .contains("vacuum cannot remove");
      assertThat(held.fix())
          .contains("pg_terminate_backend(" + pid + ")")
          .contains("pgbus.doctor.horizon-warn=1s");

      report.commit();
      Doctor.Check after =
          check(Doctor.examine(engine, db.dataSource(), 20, "k"), "transaction horizon");
      assertThat(after.status()).isEqualTo(Doctor.Status.OK);
      assertThat(after.detail()).doesNotContain("pid " + pid);
    }
  }

  @Test
  void warnsWhenThePoolCannotServeTheCapsuleThreads() {
    Engine engine =
        engines.start(engines.config().capsule("big", 16, "q").build(), (job, tx) -> null);

    Doctor.Report report = Doctor.examine(engine, db.dataSource(), 10, "pool.key");

    Doctor.Check pool = check(report, "pool");
    assertThat(pool.status()).isEqualTo(Doctor.Status.WARN);
    assertThat(pool.detail()).contains("pool of 10 for 16 capsule thread(s)");
    assertThat(pool.fix()).contains("at least 18");
    assertThat(report.status()).isEqualTo(Doctor.Status.WARN);
  }

  @Test
  void namesTheSettingWhenThePoolSizeIsUnknown() {
    Engine engine = engines.start(engines.config().capsule("c", 2, "q").build(), (job, tx) -> null);

    Doctor.Report report =
        Doctor.examine(engine, db.dataSource(), null, "pgbus.datasource.max-pool-size");

    assertThat(check(report, "pool").fix()).contains("pgbus.datasource.max-pool-size");
    assertThat(report.budget().formula()).contains("N x (1 + P)");
  }

  @Test
  void failsTheSchemaCheckWhenTheSchemaIsMissing() throws Exception {
    try (TestDatabase empty = TestDatabase.empty().create()) {
      Engine engine =
          Engine.builder(
                  EngineConfig.builder().drainTimeout(Duration.ofSeconds(1)).build(),
                  empty.dataSource())
              .build();

      Doctor.Report report = Doctor.examine(engine, empty.dataSource(), 20, "k");

      assertThat(check(report, "schema").status()).isEqualTo(Doctor.Status.FAIL);
      assertThat(check(report, "schema").fix()).contains("pgbus.migrate=true");
      assertThat(check(report, "listener").detail()).contains("only enqueues");
      assertThat(report.status()).isEqualTo(Doctor.Status.FAIL);
    }
  }

  private static Doctor.Check check(Doctor.Report report, String name) {
    return report.checks().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.PgbusException;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Schema.migrate: safe when many JVMs start at once, and honest about the installed version. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SchemaMigrationTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  @Test
  @Order(0)
  void enqueueingBeforeTheSchemaExistsSaysHowToInstallIt() throws Exception {
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> engine.jobs().enqueue(c, NewJob.of("emails", "{}")))
          .isInstanceOf(PgbusException.class)
          .hasMessageContaining("schema is missing or older")
          .hasMessageContaining("pgbus.migrate=true")
          .extracting(e -> ((PgbusException) e).queue())
          .isEqualTo("emails");
    }
  }

  @Test
  @Order(1)
  void reportsNoVersionBeforeTheFirstMigration() throws Exception {
    try (Connection c = db.connect()) {
      assertThat(Schema.installedVersion(c)).isNull();
    }
  }

  @Test
  @Order(2)
  void tenConcurrentMigratorsApplyVersionOneExactlyOnce() throws Exception {
    int migrators = 10;
    ExecutorService pool = Executors.newFixedThreadPool(migrators);
    try {
      var gate = new CountDownLatch(1);
      var results = new ArrayList<Future<String>>();
      for (int i = 0; i < migrators; i++) {
        Callable<String> migrate =
            () -> {
              gate.await();
              return Schema.migrate(db.dataSource());
            };
        results.add(pool.submit(migrate));
      }
      gate.countDown();
      for (Future<String> r : results) {
        assertThat(r.get(60, TimeUnit.SECONDS)).isEqualTo(Schema.EXPECTED_VERSION);
      }
    } finally {
      pool.shutdownNow();
    }

    // Counted against the distinct versions, not the version number: versions may have gaps
    // (a branch's V7 before another's V6 is merged).
    assertThat(
            db.queryLong(
                "SELECT count(*) - count(DISTINCT version) FROM pgbus.schema_history"
                    + " WHERE version IS NOT NULL AND success"))
        .as("each migration applied exactly once")
        .isZero();
    assertThat(
            db.queryLong(
                "SELECT max(version::int) FROM pgbus.schema_history WHERE version IS NOT NULL AND success"))
        .isEqualTo(Long.parseLong(Schema.EXPECTED_VERSION));
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schema_history WHERE NOT success"))
        .isZero();
    try (Connection c = db.connect()) {
      assertThat(Schema.installedVersion(c)).isEqualTo(Schema.EXPECTED_VERSION);
    }
  }

  @Test
  @Order(3)
  void migratingAnUpToDateSchemaChangesNothing() throws Exception {
    long before = db.queryLong("SELECT count(*) FROM pgbus.schema_history");

    assertThat(Schema.migrate(db.dataSource())).isEqualTo(Schema.EXPECTED_VERSION);

    assertThat(db.queryLong("SELECT count(*) FROM pgbus.schema_history")).isEqualTo(before);
  }
}

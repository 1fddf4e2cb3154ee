package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A migration that meets a transaction of the running release gives way instead of deadlocking it
 * (MigrationLockTimeout): V27 alters pgbus.setting, then waits for pgbus.job, which a writer of the
 * previous release holds while it goes on to read pgbus.setting. Without the bound one of the two
 * failed with "deadlock detected" after 1 s (the bench's UPGRADE workload hit it with v0.1.0's
 * enqueue); with it the migration rolls back after 500 ms, the writer goes on, and the migration's
 * next run succeeds.
 */
class MigrationLockTimeoutTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  @Test
  void aMigrationWaitingForAWritersLockYieldsAndRunsAgain() throws Exception {
    Flyway.configure()
        .dataSource(db.dataSource())
        .schemas("pgbus")
        .createSchemas(true)
        .table("schema_history")
        .locations("classpath:io/pgbus/db/migration")
        .target("26")
        .load()
        .migrate();
    try (Connection writer = db.helperConnection()) {
      writer.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        // The writer's transaction holds pgbus.job (an insert), as an enqueue in a handler does.
        st.execute("LOCK TABLE pgbus.job IN ROW EXCLUSIVE MODE");
        CompletableFuture<String> migrated =
            CompletableFuture.supplyAsync(() -> Schema.migrate(db.dataSource()));
        awaitMigrationWaitingForTheJobTable();
        // Now the writer reads pgbus.setting, which the waiting migration altered (V27).
        long t0 = System.nanoTime();
        st.execute("SELECT count(*) FROM pgbus.setting");
        long waitedMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(waitedMs)
            .as("the writer waited for the migration's lock at most its lock timeout")
            .isLessThan(MigrationLockTimeout.TIMEOUT.toMillis() + 400);
        writer.commit();
        assertThat(migrated.get(60, TimeUnit.SECONDS)).isEqualTo(Schema.EXPECTED_VERSION);
      }
    }
  }

  private static void awaitMigrationWaitingForTheJobTable() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (db.queryLong(
            "SELECT count(*) FROM pg_locks WHERE NOT granted"
                + " AND relation = 'pgbus.job'::regclass")
        == 0) {
      assertThat(System.nanoTime()).as("the migration waits for pgbus.job").isLessThan(deadline);
      Thread.sleep(10);
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A database of the release before V33, holding finished jobs, upgrades without moving a row in the
 * migration; the leader then moves them in bounded batches, and nothing is lost or doubled.
 */
class ArchiveUpgradeTest {

  @RegisterExtension static final TestDatabase older = TestDatabase.empty();

  private static final int FINISHED = 2_500;
  private static final int WAITING = 300;

  @Test
  void finishedJobsOfAnOlderSchemaMoveAfterTheUpgradeInBoundedBatches() throws Exception {
    Flyway.configure()
        .dataSource(older.dataSource())
        .schemas("pgbus")
        .createSchemas(true)
        .table("schema_history")
        .locations("classpath:io/pgbus/db/migration")
        .target("31")
        .load()
        .migrate();
    // Completed and cancelled jobs of the last two days, as the previous release leaves them.
    older.update(
        """
        INSERT INTO pgbus.job (queue, state, payload, attempt, run_at, created_at, attempted_at,
                               attempted_by, finalized_at)
        SELECT 'upgraded', CASE WHEN i % 10 = 0 THEN 'cancelled' ELSE 'completed' END::pgbus.job_state,
               jsonb_build_object('n', i), 1, t, t, t, 'old', t
          FROM generate_series(1, ?) AS i,
               LATERAL (SELECT now() - interval '5 minutes' - i * interval '1 minute' AS t) tt
        """,
        FINISHED);
    older.update(
        "INSERT INTO pgbus.job (queue, payload) SELECT 'upgraded', '{}' FROM generate_series(1, ?)",
        WAITING);

    assertThat(Schema.migrate(older.dataSource())).isEqualTo(Schema.EXPECTED_VERSION);

    assertThat(older.queryLong("SELECT count(*) FROM pgbus.job_history"))
        .as("the migration moves nothing")
        .isZero();
    var archive = new ArchiveStore();
    int rounds = 0;
    long moved = 0;
    try (Connection c = older.connect()) {
      archive.archive(c, Duration.ofDays(3), 1); // the partitions (a batch of 1 moves little)
      var now = java.time.Instant.now();
      int n;
      do {
        n = archive.move(c, now.minus(Duration.ofDays(3)), now.minus(ArchiveStore.GRACE), 1000);
        assertThat(n).isLessThanOrEqualTo(1000);
        moved += n;
        rounds++;
      } while (n > 0);
    }
    assertThat(rounds).isGreaterThanOrEqualTo(3);
    assertThat(older.queryLong("SELECT count(*) FROM pgbus.job_history")).isEqualTo(FINISHED);
    assertThat(older.queryLong("SELECT count(*) FROM pgbus.job_history_default")).isZero();
    assertThat(older.queryLong("SELECT count(*) FROM pgbus.job")).isEqualTo(WAITING);
    assertThat(
            older.queryLong(
                "SELECT count(*) FROM (SELECT id FROM pgbus.job_all GROUP BY id"
                    + " HAVING count(*) > 1) d"))
        .isZero();
  }
}

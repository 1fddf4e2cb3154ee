package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pgbus.PgbusException;
import io.pgbus.engine.testing.PgBouncer;
import io.pgbus.engine.testing.TestDatabase;
import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The schema is migrated over a direct session when the JTA datasource goes through a real
 * PgBouncer in transaction mode (issue #33), and never through the pooler. Skipped where PgBouncer
 * is not installed ({@link PgBouncer#MISSING}).
 */
class MigrationRouteTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  private static PgBouncer pgb;

  @BeforeAll
  static void startPgBouncer() throws Exception {
    assumeTrue(PgBouncer.available(), PgBouncer.MISSING);
    var url = new URI(db.jdbcUrl().substring("jdbc:".length()));
    // One server connection, so that a client holding it shuts every other out.
    pgb = PgBouncer.inFrontOf(url.getHost(), url.getPort()).poolSize(1).start();
  }

  @AfterAll
  static void stopPgBouncer() {
    if (pgb != null) {
      pgb.close();
    }
  }

  @Test
  void behindThePoolerTheSchemaIsMigratedOverTheDirectConnection() throws Exception {
    DataSource pooled = pgb.dataSource(db.name());
    PoolerGuard.Session session = new PoolerGuard().inspect(pooled);
    DataSource route = MigrationRoute.choose(session, pooled, db.dataSource()::getConnection);

    // Another client holds the pooler's one server connection for the whole migration: a
    // migration that went through the pooler would wait for it (120 s, PgBouncer's
    // query_wait_timeout) and fail the timeout.
    String installed;
    try (Connection holder = pooled.getConnection()) {
      holder.setAutoCommit(false);
      holder.createStatement().execute("SELECT 1");
      installed = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> Schema.migrate(route));
      holder.rollback();
    }

    assertThat(session.direct()).isFalse();
    assertThat(route).isNotSameAs(pooled);
    assertThat(installed).isEqualTo(Schema.EXPECTED_VERSION);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database ="
                    + " (SELECT oid FROM pg_database WHERE datname = current_database())"))
        .as("advisory locks left held")
        .isZero();
  }

  @Test
  void behindThePoolerWithoutADirectConnectionTheStartNamesTheFix() throws Exception {
    DataSource pooled = pgb.dataSource(db.name());
    PoolerGuard.Session session = new PoolerGuard().inspect(pooled);

    assertThatThrownBy(() -> MigrationRoute.choose(session, pooled, null))
        .isInstanceOf(PgbusException.class)
        .hasMessageContaining("transaction-mode pooler")
        .hasMessageContaining("pgbus.listener.url")
        .hasMessageContaining("pgbus.migrate=false");
    // A listener URL that goes through the pooler too is no way round it.
    assertThatThrownBy(() -> MigrationRoute.choose(session, pooled, pooled::getConnection))
        .isInstanceOf(PgbusException.class)
        .hasMessageContaining("the listener's connection is not a direct session either")
        .hasMessageContaining("pgbus.listener.url");
  }

  @Test
  void withoutAPoolerTheJtaDatasourceIsKept() throws Exception {
    DataSource direct = db.dataSource();
    PoolerGuard.Session session = new PoolerGuard().inspect(direct);

    assertThat(MigrationRoute.choose(session, direct, () -> null)).isSameAs(direct);
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.engine.Schema;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import java.sql.Connection;
import java.time.Duration;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Inside the server, Flyway finds the repeatable migrations (R__*.sql) next to the versioned ones:
 * on Liberty it lists the location only through its marker file, so a file it could not see would
 * leave a function at an old definition without a word.
 */
@ExtendWith(ArquillianExtension.class)
class SchemaIT {

  /** The repeatable migrations of this build (pgbus-impl, io/pgbus/db/migration). */
  private static final String REPEATABLE =
      "R__checks.sql,R__claim.sql,R__enqueue.sql,R__explain.sql,R__flow.sql,R__history.sql,"
          + "R__links.sql,R__names.sql,R__notify.sql,R__pause.sql,R__start_by.sql,R__tick.sql,"
          + "R__unique.sql,R__workflow.sql";

  private static final String APPLIED =
      " FROM pgbus.schema_history WHERE type = 'SQL' AND version IS NULL AND success";

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of("schema");
  }

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void theServerAppliesTheRepeatableMigrationsAndReportsTheVersionedOne() throws Exception {
    Await.until(
        "the server to migrate to version " + Schema.EXPECTED_VERSION,
        Duration.ofSeconds(60),
        () -> {
          try (Connection c = ds.getConnection()) {
            return Schema.EXPECTED_VERSION.equals(Schema.installedVersion(c));
          }
        });
    // Flyway commits each migration on its own; the repeatable ones come after the versioned.
    Await.until(
        "the repeatable migrations",
        Duration.ofSeconds(30),
        () ->
            Sql.count(ds, "SELECT count(DISTINCT script)" + APPLIED)
                >= REPEATABLE.split(",").length);
    assertEquals(
        REPEATABLE,
        Sql.value(ds, "SELECT string_agg(DISTINCT script, ',' ORDER BY script)" + APPLIED));
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two applications on one server and one database (issue #30): one in the default schema pgbus, one
 * with {@code pgbus.schema=it_tenant}, both reading the queue it_twin. Each runs only the jobs of
 * its own schema, and the second elects its own leader in its schema.
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class SchemaInstancesIT {

  private static final String DEFAULT_APP = "schema-default";
  private static final String TENANT_APP = "schema-tenant";
  private static final String TENANT = "it_tenant";

  @Deployment(name = DEFAULT_APP, managed = false, testable = false)
  static WebArchive inPgbus() {
    return app(DEFAULT_APP);
  }

  @Deployment(name = TENANT_APP, managed = false, testable = false)
  static WebArchive inTenant() {
    return app(TENANT_APP, "pgbus.schema=" + TENANT);
  }

  private static WebArchive app(String name, String... more) {
    List<String> config =
        new ArrayList<>(
            List.of(
                "pgbus.worker-id=" + name,
                "pgbus.capsules=twin",
                "pgbus.capsule.twin.queues=it_twin"));
    config.addAll(List.of(more));
    return PgbusWars.of(name, config.toArray(String[]::new)).addClass(TwinHandler.class);
  }

  @ArquillianResource Deployer deployer;

  @Test
  void eachApplicationRunsOnlyTheJobsOfItsOwnSchema() throws Exception {
    DataSource db = DeployGateIT.helper();
    Sql.execute(db, "DROP SCHEMA IF EXISTS " + TENANT + " CASCADE");
    deployer.deploy(DEFAULT_APP);
    deployer.deploy(TENANT_APP);
    try {
      Await.until(
          "the tenant's schema and leader",
          Duration.ofSeconds(120),
          () ->
              Sql.value(db, "SELECT pg_catalog.to_regclass('" + TENANT + ".leader')") != null
                  && TENANT_APP.equals(Sql.value(db, "SELECT holder FROM " + TENANT + ".leader")));
      List<Long> inPgbus = new ArrayList<>();
      List<Long> inTenant = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        inPgbus.add(enqueue(db, "pgbus"));
        inTenant.add(enqueue(db, TENANT));
      }
      Await.until(
          "all six jobs to complete",
          Duration.ofSeconds(60),
          () -> done(db, "pgbus", inPgbus) == 3 && done(db, TENANT, inTenant) == 3);
      assertEquals(
          3L,
          Sql.count(
              db,
              "SELECT count(*) FROM pgbus.job_all WHERE id = ANY(?) AND attempted_by = ?",
              inPgbus.toArray(Long[]::new),
              DEFAULT_APP),
          "the default schema's jobs ran in the default application");
      assertEquals(
          3L,
          Sql.count(
              db,
              "SELECT count(*) FROM " + TENANT + ".job_all WHERE id = ANY(?) AND attempted_by = ?",
              inTenant.toArray(Long[]::new),
              TENANT_APP),
          "the tenant's jobs ran in the tenant's application");
    } finally {
      deployer.undeploy(TENANT_APP);
      deployer.undeploy(DEFAULT_APP);
      Sql.execute(db, "DROP SCHEMA IF EXISTS " + TENANT + " CASCADE");
    }
  }

  private static long enqueue(DataSource db, String schema) throws Exception {
    return ((Number)
            Sql.value(db, "SELECT " + schema + ".enqueue('it_twin', '{\"text\": \"twin\"}')"))
        .longValue();
  }

  private static long done(DataSource db, String schema, List<Long> ids) throws Exception {
    return Sql.count(
        db,
        "SELECT count(*) FROM " + schema + ".job_all WHERE id = ANY(?) AND state = 'completed'",
        (Object) ids.toArray(Long[]::new));
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Two instances in one database ({@code pgbus.schema}): the default one in {@code pgbus} and one in
 * {@code tenant_b}, with the same queue names. Each migrates from the same scripts, runs only its
 * own jobs, is woken only on its own channels and elects its own leader.
 */
class SchemaInstancesTest {

  private static final String TENANT = "tenant_b";
  private static final String QUEUE = "emails";

  // The template's pgbus schema, and tenant_b migrated beside it.
  @RegisterExtension static final TestDatabase db = TestDatabase.migrated().inSchema(TENANT);
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Set<Long> ranInPgbus = ConcurrentHashMap.newKeySet();
  private final Set<Long> ranInTenant = ConcurrentHashMap.newKeySet();

  /** The database without any mapping: the default instance's connections. */
  private static DataSource plain() {
    var ds = new PGSimpleDataSource();
    ds.setUrl(db.jdbcUrl());
    return ds;
  }

  @Test
  void theOtherSchemaIsMigratedFromTheSameScriptsWithTheSameChecksums() {
    String history =
        "SELECT string_agg(coalesce(version, '') || ':' || script || ':' || checksum, ','"
            + " ORDER BY installed_rank) FROM %s.schema_history WHERE success";
    String pgbus = db.queryText(history.formatted("pgbus").replace("pgbus.", "\"pgbus\"."));
    String tenant = db.queryText(history.formatted(TENANT));
    assertThat(tenant).isEqualTo(pgbus).contains("1:V1__job.sql:");
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_catalog.pg_proc WHERE pronamespace = 'pgbus'::regnamespace"))
        .as("functions in tenant_b (the helper's text is mapped too)")
        .isEqualTo(
            db.queryLong(
                "SELECT count(*) FROM pg_catalog.pg_proc"
                    + " WHERE pronamespace = '\"pgbus\"'::regnamespace"))
        .isGreaterThan(20);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pg_catalog.pg_proc WHERE pronamespace = 'pgbus'::regnamespace"
                    + " AND pg_catalog.array_to_string(proconfig, ',') LIKE '%pgbus, pg_temp%'"))
        .as("pinned paths name pgbus in the default schema")
        .isZero();
  }

  @Test
  void eachInstanceRunsOnlyItsOwnJobsWokenOnlyOnItsOwnChannels() throws Exception {
    // A poll far beyond the test's waits: a job that runs was woken by its own instance.
    EngineConfig pgbusConfig =
        engines
            .config()
            .capsule("main", 2, QUEUE)
            .pollInterval(Duration.ofMinutes(5))
            .pollCeiling(Duration.ofMinutes(5))
            .build();
    EngineConfig tenantConfig =
        engines
            .config()
            .capsule("main", 2, QUEUE)
            .pollInterval(Duration.ofMinutes(5))
            .pollCeiling(Duration.ofMinutes(5))
            .build();
    Engine pgbus =
        engines.start(
            Engine.builder(pgbusConfig, plain())
                .listenerConnections(engines.listenerConnections())
                .jobs(
                    (job, tx) -> {
                      ranInPgbus.add(job.id());
                      return null;
                    }));
    Engine tenant =
        engines.start(
            engines
                .builder(tenantConfig)
                .jobs(
                    (job, tx) -> {
                      ranInTenant.add(job.id());
                      return null;
                    }));
    TestEngines.awaitDelivering(pgbus);
    TestEngines.awaitDelivering(tenant);
    assertThat(tenant.schema().name()).isEqualTo(TENANT);
    // Each instance's fleet is its own listeners (application_name pgbus-listener, tenant_b:-...).
    try (Connection p = plain().getConnection();
        Connection t = db.connect()) {
      assertThat(new FleetStore().listeners(p))
          .extracting(FleetStore.ListenerBackend::pid)
          .containsExactly(pgbus.status().listener().backendPid());
      assertThat(new FleetStore().listeners(t))
          .extracting(FleetStore.ListenerBackend::pid)
          .containsExactly(tenant.status().listener().backendPid());
    }

    try (Connection spy = DriverManager.getConnection(db.jdbcUrl())) {
      try (Statement st = spy.createStatement()) {
        st.execute("LISTEN \"pgbus_emails\"");
        st.execute("LISTEN \"tenant_b:_emails\"");
      }
      long pgbusHeard = pgbus.status().listener().notifications();

      List<Long> tenantIds = enqueue(db.dataSource(), 3);
      Await.until("tenant_b's jobs to run", Duration.ofSeconds(20), () -> ranInTenant.size() == 3);
      assertThat(ranInTenant).containsExactlyInAnyOrderElementsOf(tenantIds);
      Map<String, Integer> heard = drain(spy);
      assertThat(heard).containsKey("tenant_b:_emails").doesNotContainKey("pgbus_emails");
      assertThat(pgbus.status().listener().notifications())
          .as("notifications the default instance heard")
          .isEqualTo(pgbusHeard);

      long tenantHeard = tenant.status().listener().notifications();
      List<Long> pgbusIds = enqueue(plain(), 2);
      Await.until("pgbus's jobs to run", Duration.ofSeconds(20), () -> ranInPgbus.size() == 2);
      assertThat(ranInPgbus).containsExactlyInAnyOrderElementsOf(pgbusIds);
      heard = drain(spy);
      assertThat(heard).containsKey("pgbus_emails").doesNotContainKey("tenant_b:_emails");
      assertThat(tenant.status().listener().notifications()).isEqualTo(tenantHeard);
    }
    assertThat(ranInTenant).hasSize(3);
    assertThat(ranInPgbus).hasSize(2);
    try (Connection c = plain().getConnection()) {
      assertThat(count(c, "SELECT count(*) FROM pgbus.job_all")).isEqualTo(2);
    }
    try (Connection c = db.connect()) {
      assertThat(count(c, "SELECT count(*) FROM pgbus.job_all"))
          .as("tenant_b.job_all")
          .isEqualTo(3);
    }
  }

  @Test
  void eachInstanceElectsItsOwnLeader() {
    Engine pgbus =
        engines.start(
            Engine.builder(engines.config().build(), plain())
                .listenerConnections(engines.listenerConnections()));
    Engine tenant = engines.start(engines.builder(engines.config().build()));
    Await.until(
        "both instances to elect a leader",
        Duration.ofSeconds(20),
        () -> pgbus.status().leader() && tenant.status().leader());
    try (Connection p = plain().getConnection();
        Connection t = db.connect()) {
      assertThat(pgbus.leaderHolder(p)).isEqualTo(pgbus.config().workerId());
      assertThat(tenant.leaderHolder(t)).isEqualTo(tenant.config().workerId());
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Enqueues {@code n} jobs with SQL (pgbus.enqueue, mapped with the connection's text), so that
   * the database sends the wake and only the instance's listener can start them.
   */
  private static List<Long> enqueue(DataSource ds, int n) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?, ?::jsonb)")) {
      Long[] ids = new Long[n];
      for (int i = 0; i < n; i++) {
        ps.setString(1, QUEUE);
        ps.setString(2, "{\"n\":" + i + "}");
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          ids[i] = rs.getLong(1);
        }
      }
      return List.of(ids);
    }
  }

  /** The notifications the spy heard since the last drain, by channel, after a short wait. */
  private static Map<String, Integer> drain(Connection spy) throws SQLException {
    var heard = new HashMap<String, Integer>();
    PGNotification[] batch = spy.unwrap(PGConnection.class).getNotifications(1000);
    while (batch != null && batch.length > 0) {
      for (PGNotification n : batch) {
        heard.merge(n.getName(), 1, Integer::sum);
      }
      batch = spy.unwrap(PGConnection.class).getNotifications(200);
    }
    return heard;
  }

  private static long count(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}

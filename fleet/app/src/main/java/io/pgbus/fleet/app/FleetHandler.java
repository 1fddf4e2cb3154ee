package io.pgbus.fleet.app;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Runs the fleet's jobs. It writes its business row first and then works (sleeps), so a server
 * killed mid-job always leaves an uncommitted row behind: the row commits with the job's completion
 * or not at all. The row names the attempt, the server and its process, so FleetIT can tell which
 * attempt of which job ran where. The table has no unique key on purpose: a job that committed
 * twice shows up as two rows rather than as a failed attempt.
 *
 * <p>It writes through pgbus's own JTA datasource, named by {@code pgbus.datasource} ({@code
 * jdbc/pgbus} on Liberty; WildFly's name comes from a system property), so that one WAR serves both
 * servers. Its writes must go to that datasource: a second one-phase resource in the job's
 * transaction cannot commit atomically with the completion. (A resource reference bound in
 * jboss-web.xml by {@code jndi-name} was not applied by WildFly 39 in our try: the handler got its
 * default datasource, ExampleDS, and every job failed with ARJUNA016154, "Unable to add multiple
 * one-phase resources in the same transaction".)
 */
@ApplicationScoped
@Handles({"fleet", "fleet_pause"})
public class FleetHandler implements JobHandler<FleetJob> {

  private static final String RECORD =
      "INSERT INTO fleet_run (job_id, queue, attempt, server, pid) VALUES (?, ?, ?, ?, ?)";

  private static final long PID = ProcessHandle.current().pid();

  @Inject
  @ConfigProperty(name = "pgbus.datasource", defaultValue = "jdbc/pgbus")
  String dataSourceName;

  private DataSource dataSource;

  // Set per server (-Dfleet.server=liberty-a); MicroProfile Config reads system properties.
  @Inject
  @ConfigProperty(name = "fleet.server", defaultValue = "unnamed")
  String server;

  @PostConstruct
  void lookUpDataSource() {
    try {
      dataSource = InitialContext.doLookup(dataSourceName);
    } catch (NamingException e) {
      throw new IllegalStateException(
          "fleet: pgbus.datasource=" + dataSourceName + " was not found in JNDI", e);
    }
  }

  @Override
  public Outcome handle(FleetJob job, JobContext context) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement(RECORD)) {
      ps.setLong(1, context.id());
      ps.setString(2, context.queue());
      ps.setInt(3, context.attempt());
      ps.setString(4, server);
      ps.setLong(5, PID);
      ps.executeUpdate();
    }
    if (job.sleepMs > 0) {
      Thread.sleep(job.sleepMs);
    }
    return Outcome.complete();
  }
}

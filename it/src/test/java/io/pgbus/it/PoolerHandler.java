package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;

/**
 * PoolerIT's handler: records each run in it_pooled_runs through the datasource behind PgBouncer,
 * in the job's transaction, so a row commits only with the job's completion; a marker that asks for
 * it fails its first attempt after writing (the row rolls back, the retry writes its own).
 */
@ApplicationScoped
@Handles({PoolerHandler.QUEUE, PoolerHandler.CRON_QUEUE})
public class PoolerHandler implements JobHandler<Marker> {

  static final String QUEUE = "it_pooled";
  static final String CRON_QUEUE = "it_pooled_cron";

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    DataSource ds = pooled();
    try (Connection c = ds.getConnection()) {
      // What docs/operations.md asks of an application behind PgBouncer (prepareThreshold=0 on
      // its datasource), done here so the datasource keeps pgjdbc's default for pgbus to guard.
      c.unwrap(org.postgresql.PGConnection.class).setPrepareThreshold(0);
      insert(c, marker, context);
    }
    if (marker.fail && context.attempt() == 1) {
      throw new IllegalStateException("first attempt of " + marker.text + " fails on purpose");
    }
    return Outcome.complete();
  }

  // Schema-qualified: the application's SQL must not depend on a pooled server connection's
  // search_path (operations.md, "Behind PgBouncer": migrate directly).
  private static void insert(Connection c, Marker marker, JobContext context) throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO public.it_pooled_runs(job_id, queue, attempt, text) VALUES (?, ?, ?, ?)")) {
      ps.setLong(1, context.id());
      ps.setString(2, context.queue());
      ps.setInt(3, context.attempt());
      ps.setString(4, marker.text);
      ps.execute();
    }
  }

  /** jdbc/pgbusPooled: its Liberty name, else its WildFly one (TestServer is not in the server). */
  private static DataSource pooled() throws NamingException {
    try {
      return InitialContext.doLookup("jdbc/pgbusPooled");
    } catch (NamingException e) {
      return InitialContext.doLookup("java:jboss/datasources/pgbusPooled");
    }
  }
}

package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * Writes its business row, then sleeps inside SQL on the JTA datasource (the job transaction's
 * connection): {@code pg_sleep(30)} for a marker "sleep-…", {@code pg_sleep(0.5)} otherwise. An
 * interrupt does not reach a JDBC read, so only a cancel of the statement stops the long one early
 * ({@link CancelRunningJobIT}); the short one shows the connection took no stray cancel.
 */
@ApplicationScoped
@Handles("it_cancel_sql")
public class SqlSleepingHandler implements JobHandler<Marker> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
        ps.setString(1, marker.text);
        ps.setLong(2, context.id());
        ps.setString(3, context.queue());
        ps.setInt(4, context.attempt());
        ps.execute();
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              marker.text.startsWith("sleep-") ? "SELECT pg_sleep(30)" : "SELECT pg_sleep(0.5)")) {
        ps.execute();
      }
    }
    return Outcome.complete();
  }
}

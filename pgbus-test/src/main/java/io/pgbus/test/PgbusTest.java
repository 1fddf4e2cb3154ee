package io.pgbus.test;

import io.pgbus.JobQueue;
import io.pgbus.engine.Schema;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The database side of a plain test: the pgbus schema, a clean slate between tests, and a {@link
 * JobQueue} for the code under test, which in production gets the container's.
 *
 * <pre>{@code
 * PgbusTest.migrate(dataSource);                   // once, before the tests
 * PgbusTest.reset(dataSource);                     // before each test
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   new OrderService(PgbusTest.jobQueue(c)).place(c, order);   // enqueues in c's transaction
 *   requireEnqueued(c, "orders", new OrderPlaced(order.id()));  // seen before the commit
 *   c.rollback();                                              // and gone with it
 * }
 * }</pre>
 */
public final class PgbusTest {

  private PgbusTest() {}

  /**
   * Creates or upgrades the pgbus schema, as the runtime does at start ({@code pgbus.migrate});
   * returns the version installed.
   */
  public static String migrate(DataSource ds) {
    return Schema.migrate(Objects.requireNonNull(ds, "ds"));
  }

  /**
   * Deletes every job, cron state, pause and audit entry: each test starts from empty queues. Job
   * ids keep counting up.
   */
  public static void reset(DataSource ds) {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute("TRUNCATE pgbus.job, pgbus.cron, pgbus.schedule, pgbus.queue_pause, pgbus.audit");
    } catch (SQLException e) {
      throw new IllegalStateException(
          "pgbus-test could not empty the pgbus tables: "
              + e.getMessage()
              + " (is the schema there? PgbusTest.migrate(dataSource) installs it)",
          e);
    }
  }

  /**
   * A {@link JobQueue} that works in {@code c}'s transaction: its enqueues commit and roll back
   * with the caller's writes on {@code c}, as {@code JobQueue} does in the container's JTA
   * transaction. The caller owns {@code c}; the queue never closes it.
   */
  public static JobQueue jobQueue(Connection c) {
    Objects.requireNonNull(c, "c");
    return new JdbcJobQueue(
        new ConnectionSource() {
          @Override
          public Connection getConnection() {
            return borrowed(c);
          }
        });
  }

  /**
   * A {@link JobQueue} that takes a connection from {@code ds} for each call: each call commits on
   * its own, unless {@code ds} is a {@link TestWorker#dataSource()} inside a job, whose calls join
   * the job's transaction (a handler enqueueing a follow-up).
   */
  public static JobQueue jobQueue(DataSource ds) {
    return new JdbcJobQueue(Objects.requireNonNull(ds, "ds"));
  }
}

package io.pgbus.it;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.JobQueue;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/** An application EJB that enqueues inside its container-managed transaction. */
@Stateless
public class Enqueuer {

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;
  @Resource SessionContext context;

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  /** Writes a business row and enqueues a job, then rolls the whole transaction back. */
  public long enqueueThenRollBack(String queue, String text) throws Exception {
    businessRow(text);
    long id = jobs.enqueue(queue, new Marker(text, false));
    context.setRollbackOnly();
    return id;
  }

  /** Writes a business row and enqueues a job; both commit when this method returns. */
  public long enqueue(String queue, String text, boolean fail) throws Exception {
    businessRow(text);
    return jobs.enqueue(queue, new Marker(text, fail));
  }

  /** Cancels a job through the API, waiting or running; true when it acted. */
  public boolean cancel(long id) {
    return jobs.cancel(id);
  }

  /** Enqueues one job per marker in this transaction; all become visible at once. */
  public List<Long> enqueueAll(String queue, List<Marker> markers) {
    awaitReady();
    return jobs.enqueueAll(queue, markers, EnqueueOptions.defaults());
  }

  /**
   * Writes a business row and enqueues two jobs with the same unique key in one transaction; the
   * second must come back as a duplicate of the first without spoiling the transaction.
   */
  public Enqueued[] enqueueUniqueTwice(String queue, String text, String key) throws Exception {
    businessRow(text);
    EnqueueOptions unique = EnqueueOptions.defaults().withUniqueKey(key);
    Enqueued first = jobs.enqueueIfAbsent(queue, new Marker(text, false), unique);
    Enqueued second = jobs.enqueueIfAbsent(queue, new Marker(text + "-again", false), unique);
    businessRow(text + "-after");
    return new Enqueued[] {first, second};
  }

  /** Enqueues a keyed job, then rolls the transaction back. */
  public Enqueued enqueueUniqueThenRollBack(String queue, String text, String key) {
    awaitReady();
    Enqueued e =
        jobs.enqueueIfAbsent(
            queue, new Marker(text, false), EnqueueOptions.defaults().withUniqueKey(key));
    context.setRollbackOnly();
    return e;
  }

  /**
   * Waits (up to a minute) until pgbus reports ready. The IT database starts empty, and the first
   * test deployed can otherwise enqueue before the runtime's start-up migration has created the
   * schema ("pgbus schema is missing"): a user gates traffic on /health/ready the same way.
   */
  private void awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    try {
      while (!runtime.status().ready() && System.nanoTime() < deadline) {
        TimeUnit.MILLISECONDS.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void businessRow(String text) throws Exception {
    awaitReady();
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO it_orders(text) VALUES (?)")) {
      ps.setString(1, text);
      ps.execute();
    }
  }
}

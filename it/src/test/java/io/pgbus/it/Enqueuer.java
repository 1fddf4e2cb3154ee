package io.pgbus.it;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import jakarta.annotation.Resource;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import javax.sql.DataSource;

/** An application EJB that enqueues inside its container-managed transaction. */
@Stateless
public class Enqueuer {

  @Inject JobQueue jobs;
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

  /** Enqueues one job per marker in this transaction; all become visible at once. */
  public List<Long> enqueueAll(String queue, List<Marker> markers) {
    return jobs.enqueueAll(queue, markers, EnqueueOptions.defaults());
  }

  private void businessRow(String text) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO it_orders(text) VALUES (?)")) {
      ps.setString(1, text);
      ps.execute();
    }
  }
}

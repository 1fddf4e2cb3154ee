package io.pgbus.it;

import io.pgbus.JobQueue;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;

/**
 * An application EJB that enqueues inside its container-managed transaction and reports the wakes
 * this JVM delivered as it saw them inside that transaction, before its commit.
 */
@Stateless
public class AfterCommitEnqueuer {

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;
  @Resource SessionContext context;

  /** Enqueues two jobs in one transaction; the local wakes seen after them, before the commit. */
  public long enqueueTwoThenCountWakes(String queue, String text) {
    jobs.enqueue(queue, new Marker(text, false));
    jobs.enqueue(queue, new Marker(text + "-2", false));
    return localWakes();
  }

  /** Enqueues a job and rolls the transaction back. */
  public void enqueueThenRollBack(String queue, String text) {
    jobs.enqueue(queue, new Marker(text, false));
    context.setRollbackOnly();
  }

  /** The committed wakes this JVM delivered in-process so far. */
  public long localWakes() {
    return runtime.engine().status().wakes().local();
  }
}

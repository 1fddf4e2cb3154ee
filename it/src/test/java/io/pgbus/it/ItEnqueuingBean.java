package io.pgbus.it;

import io.pgbus.JobQueue;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;

/** An application EJB that enqueues and cancels on behalf of whoever calls it. */
@Stateless
public class ItEnqueuingBean {

  @Inject JobQueue jobs;

  /** Enqueues a job to a queue nobody handles, cancels it, and returns its id. */
  public long enqueueAndCancel(String text) {
    long id = jobs.enqueue("it_who", new Marker(text, false));
    jobs.cancel(id);
    return id;
  }
}

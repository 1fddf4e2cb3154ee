package com.example.orders;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import jakarta.ejb.Stateless;
import jakarta.inject.Inject;

/** README step 4: an enqueue in the caller's transaction. */
@Stateless
public class Signup {
  @Inject JobQueue jobs;

  public void register(String address) {
    jobs.enqueue("emails", new Email(address), EnqueueOptions.defaults().withMaxAttempts(5));
  }
}

package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/** Completes the console test's jobs, so that a replayed dead job visibly completes. */
@ApplicationScoped
@Handles("it_console")
public class ConsoleOrderHandler implements JobHandler<ConsoleOrder> {

  @Override
  public Outcome handle(ConsoleOrder order, JobContext context) {
    return Outcome.complete();
  }
}

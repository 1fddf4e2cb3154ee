package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Runs until it is cancelled (at most a minute): the console test cancels a running job from the
 * page, and the engine interrupts this handler.
 */
@ApplicationScoped
@Handles("it_console_slow")
public class ConsoleSlowHandler implements JobHandler<ConsoleOrder> {

  @Override
  public Outcome handle(ConsoleOrder order, JobContext context) throws Exception {
    long end = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < end && !context.cancellationRequested()) {
      Thread.sleep(50);
    }
    return Outcome.complete();
  }
}

package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.JobTransaction;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;

/**
 * A long job in {@link JobTransaction#HANDLER} mode: it commits a row, works for longer than the
 * test servers' transaction timeout, then commits another row, each in a transaction of its own.
 */
@ApplicationScoped
@Handles(value = "it_own_tx", transaction = JobTransaction.HANDLER)
public class OwnTransactionHandler implements JobHandler<Marker> {

  /**
   * Longer than the transaction timeout of the test servers: 120 s (totalTranLifetimeTimeout in
   * src/test/liberty/server.xml, default-timeout in src/test/wildfly/it.cli).
   */
  static final Duration RUNS_FOR = Duration.ofSeconds(125);

  @Inject HandledRows rows;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    rows.write(marker.text + ":before", context);
    Thread.sleep(RUNS_FOR.toMillis());
    rows.write(marker.text + ":after", context);
    return Outcome.complete();
  }
}

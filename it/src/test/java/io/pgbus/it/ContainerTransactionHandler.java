package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import javax.sql.DataSource;

/**
 * The same long job in the default mode: its row is written in the job's container transaction,
 * which the transaction timeout ends before the handler returns.
 */
@ApplicationScoped
@Handles("it_container_tx")
public class ContainerTransactionHandler implements JobHandler<Marker> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    HandledRows.insert(dataSource, marker.text + ":before", context);
    Thread.sleep(OwnTransactionHandler.RUNS_FOR.toMillis());
    return Outcome.complete();
  }
}

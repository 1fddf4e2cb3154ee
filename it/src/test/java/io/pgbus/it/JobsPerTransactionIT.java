package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A capsule with jobs-per-transaction=5: five jobs and their handlers' business rows commit in one
 * JTA transaction (the rows share the inserting transaction, {@code xmin}); when one handler
 * throws, its neighbours commit one by one and only the thrower is retried.
 */
@ExtendWith(ArquillianExtension.class)
class JobsPerTransactionIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "jobs-per-tx",
        "pgbus.capsules=batched",
        "pgbus.capsule.batched.queues=it_batch",
        "pgbus.capsule.batched.concurrency=1",
        "pgbus.capsule.batched.jobs-per-transaction=5",
        // A long backoff keeps a failed job retryable while the test looks at it.
        "pgbus.retry.base=1h",
        "pgbus.retry.cap=2h");
  }

  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void fiveJobsAndTheirBusinessRowsCommitInOneTransaction() throws Exception {
    List<Long> ids = enqueueFive(-1);
    awaitStates(ids, "completed", 5);

    assertEquals(
        5,
        Sql.count(
            ds,
            "SELECT count(*) FROM it_handled WHERE queue = 'it_batch' AND job_id BETWEEN ? AND ?",
            range(ids)));
    assertEquals(
        1,
        Sql.count(
            ds,
            "SELECT count(DISTINCT xmin::text) FROM ("
                + " SELECT xmin FROM it_handled WHERE queue = 'it_batch' AND job_id BETWEEN ? AND ?"
                + " UNION ALL SELECT xmin FROM pgbus.job WHERE queue = 'it_batch' AND id BETWEEN ? AND ?) t",
            ids.get(0),
            ids.get(4),
            ids.get(0),
            ids.get(4)),
        "one transaction wrote every business row and every completion");
  }

  @Test
  void aThrowingHandlerFailsAloneAndItsNeighboursCommitOnTheirOwn() throws Exception {
    List<Long> ids = enqueueFive(2);
    long bad = ids.get(2);
    List<Long> good = new ArrayList<>(ids);
    good.remove(bad);
    awaitStates(good, "completed", 4);
    awaitStates(List.of(bad), "retryable", 1);

    for (long id : good) {
      assertEquals(1, Sql.count(ds, "SELECT attempt FROM pgbus.job WHERE id = ?", id));
      assertEquals(1, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
    }
    assertEquals(1, Sql.count(ds, "SELECT attempt FROM pgbus.job WHERE id = ?", bad));
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE job_id = ?", bad));
    // The group of five rolled back when its third job threw: the two that had run before it
    // rerun one by one (two transactions), and the two that had not started go on as the next
    // group (one transaction).
    assertEquals(
        3L,
        Sql.count(
            ds,
            "SELECT count(DISTINCT xmin::text) FROM it_handled WHERE queue = 'it_batch' AND job_id BETWEEN ? AND ?",
            range(ids)),
        "after the rollback the neighbours that ran rerun alone, the rest as the next group");
  }

  private List<Long> enqueueFive(int failing) {
    String run = UUID.randomUUID().toString();
    var markers = new ArrayList<Marker>();
    for (int i = 0; i < 5; i++) {
      markers.add(new Marker("batch-" + run + "-" + i, i == failing));
    }
    return enqueuer.enqueueAll("it_batch", markers);
  }

  private void awaitStates(List<Long> ids, String state, int count) throws Exception {
    Await.until(
        count + " of jobs " + ids + " to be " + state,
        Duration.ofSeconds(30),
        () -> {
          long n = 0;
          for (long id : ids) {
            n +=
                Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE id = ? AND state::text = ?",
                    id,
                    state);
          }
          return n == count;
        });
  }

  /** The first and last id of one enqueueAll: only its jobs are in it_batch between them. */
  private static Object[] range(List<Long> ids) {
    return new Object[] {ids.get(0), ids.get(ids.size() - 1)};
  }
}

package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import java.time.Duration;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A retry starts when it falls due, within its backoff and a second, not at the next poll (issue
 * #29, item 6), in the server: a capsule of one slot, retries after exactly 2 s, the poll ceiling
 * at its default minute. The first job's retry is the capsule's alarm; a second job, scheduled 1.5
 * s after that failure, rings the alarm first and fills the slot, and its own retry re-arms it.
 * Both retries must still start on time.
 */
@ExtendWith(ArquillianExtension.class)
class RetryWakeIT {

  private static final String QUEUE = "it_retry_wake";
  private static final double BOUND_SECONDS = 3.0; // the backoff and a second

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "retry-wake",
            "pgbus.capsules=rw",
            "pgbus.capsule.rw.queues=" + QUEUE,
            "pgbus.capsule.rw.concurrency=1",
            "pgbus.retry.base=2s",
            "pgbus.retry.cap=2s",
            "pgbus.retry.jitter=0")
        .addClass(RetryOnceHandler.class);
  }

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aRetryStartsWithinASecondOfItsDueTimeAlsoWhenAnotherFilledTheSlotFirst() throws Exception {
    long first = enqueue("now()");
    Await.until(
        "job " + first + "'s first failure",
        Duration.ofSeconds(30),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'retryable'",
                    first)
                == 1);
    long second =
        enqueue(
            "(SELECT (errors->0->>'at')::timestamptz + interval '1.5 seconds' FROM pgbus.job"
                + " WHERE id = "
                + first
                + ")");
    for (long id : new long[] {first, second}) {
      Await.until(
          "job " + id + " to complete on its second attempt",
          Duration.ofSeconds(30),
          () ->
              Sql.count(
                      ds,
                      "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'completed'"
                          + " AND attempt = 2",
                      id)
                  == 1);
      double late =
          ((Number)
                  Sql.value(
                      ds,
                      "SELECT extract(epoch FROM attempted_at - (errors->0->>'at')::timestamptz)"
                          + " FROM pgbus.job WHERE id = ?",
                      id))
              .doubleValue();
      assertTrue(
          late <= BOUND_SECONDS,
          "job " + id + "'s retry started " + late + " s after its failure, over " + BOUND_SECONDS);
    }
  }

  private long enqueue(String runAt) throws Exception {
    return ((Number)
            Sql.value(
                ds,
                "SELECT pgbus.enqueue('"
                    + QUEUE
                    + "', '{\"text\": \"retry\", \"fail\": false}'::jsonb, "
                    + runAt
                    + ")"))
        .longValue();
  }
}

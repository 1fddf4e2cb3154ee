package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
 * A retry due in N seconds starts within N + 1 s, on the server, with the poll ceiling at its
 * default minute (issue #29 item 6): when the capsule is idle (its own alarm) and when it is busy
 * with another job in its other slot.
 */
@ExtendWith(ArquillianExtension.class)
class RetryWakeIT {

  private static final long BOUND_MS = 3_000; // the 2 s backoff and a second

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "retry-wake",
            "pgbus.capsules=retry",
            "pgbus.capsule.retry.queues=it_retry_wake",
            "pgbus.capsule.retry.concurrency=2",
            "pgbus.retry.jitter=0")
        .addClasses(RetryOnceHandler.class);
  }

  @Inject PgbusRuntime runtime;
  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aRetryStartsWithinItsBackoffAndASecondIdleOrBusy() throws Exception {
    Await.until(
        "the engine to run", Duration.ofSeconds(60), () -> runtime.engine().status().running());
    String run = UUID.randomUUID().toString();

    // Idle: one job, nothing else in the capsule; its retry is the capsule's own alarm.
    List<Long> idle = List.of(jobs.enqueue("it_retry_wake", new Marker("idle-" + run, true)));
    awaitCompleted(idle);
    assertRetriesWithinBound("idle", idle);

    // Busy: one slot held by a blocker for eight seconds while jobs fail and fall due in the other.
    List<Long> busy = new ArrayList<>();
    busy.add(jobs.enqueue("it_retry_wake", new Marker("block-" + run, false)));
    Thread.sleep(300);
    List<Long> failing = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      failing.add(jobs.enqueue("it_retry_wake", new Marker("busy-" + i + "-" + run, true)));
      Thread.sleep(500);
    }
    busy.addAll(failing);
    awaitCompleted(busy);
    assertRetriesWithinBound("busy", failing);
  }

  private void awaitCompleted(List<Long> ids) throws Exception {
    String array = csv(ids);
    // Longer than the bound, shorter than the poll ceiling: a retry left to the poll shows late.
    Await.until(
        "jobs " + ids + " to complete",
        Duration.ofSeconds(30),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE id = ANY (string_to_array(?, ',')::bigint[])"
                        + " AND state = 'completed'",
                    array)
                == ids.size());
  }

  private static String csv(List<Long> ids) {
    return ids.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(","));
  }

  /** From each job's first failure to its second attempt's start, as the database recorded them. */
  private void assertRetriesWithinBound(String label, List<Long> ids) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT id, attempt, extract(epoch FROM attempted_at - (errors->0->>'at')::timestamptz)"
                    + " * 1000 FROM pgbus.job WHERE id = ANY (string_to_array(?, ',')::bigint[]) ORDER BY id")) {
      s.setString(1, csv(ids));
      try (ResultSet r = s.executeQuery()) {
        int rows = 0;
        while (r.next()) {
          rows++;
          assertEquals(2, r.getInt(2), label + " job " + r.getLong(1) + "'s attempts");
          double late = r.getDouble(3);
          assertTrue(
              late >= 1_900 && late <= BOUND_MS,
              label + " job " + r.getLong(1) + " started its retry " + late + " ms after failing");
        }
        assertEquals(ids.size(), rows, label + " jobs found");
      }
    }
  }
}

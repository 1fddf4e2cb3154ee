package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.Enqueued;
import io.pgbus.JobQueue;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.ejb.EJBTransactionRolledbackException;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Unique jobs, pause and resume, and cron on Liberty, through the injected {@link JobQueue} and the
 * JTA datasource: a duplicate inside a container transaction leaves it committing, a paused queue's
 * job waits until resume wakes the capsule (no polling: the ceiling is an hour), and a cron
 * configured in microprofile-config.properties enqueues one job per second.
 */
@ExtendWith(ArquillianExtension.class)
class LifecycleIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "lifecycle",
        "pgbus.capsules=life",
        "pgbus.capsule.life.queues=it_paused,it_unique,it_cron",
        "pgbus.poll-ceiling=1h",
        "pgbus.crons=it-pulse",
        "pgbus.cron.it-pulse.schedule=* * * * * *",
        "pgbus.cron.it-pulse.queue=it_cron",
        "pgbus.cron.it-pulse.payload={\"text\": \"pulse\", \"fail\": false}");
  }

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;
  @EJB Enqueuer enqueuer;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void aDuplicateInsideAJtaTransactionReturnsTheFirstJobAndTheTransactionCommits()
      throws Exception {
    String text = "unique-" + UUID.randomUUID();

    Enqueued[] both = enqueuer.enqueueUniqueTwice("it_unique", text, text);

    assertTrue(both[0].inserted());
    assertEquals(new Enqueued(both[0].id(), true), both[1]);
    awaitState(both[0].id(), "completed");
    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE unique_key = ?", text));
    assertEquals(1, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE text LIKE ?", text + "%"));
    assertEquals(2, Sql.count(ds, "SELECT count(*) FROM it_orders WHERE text LIKE ?", text + "%"));
  }

  @Test
  void aRolledBackUniqueEnqueueLeavesTheKeyFree() throws Exception {
    String key = "rb-" + UUID.randomUUID();
    try {
      enqueuer.enqueueUniqueThenRollBack("it_unique", key, key);
    } catch (EJBTransactionRolledbackException expected) {
      // setRollbackOnly may surface this way; either way the transaction is gone.
    }
    assertEquals(0, Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE unique_key = ?", key));

    Enqueued again = enqueuer.enqueueUniqueThenRollBack("it_unique", key, key);

    assertTrue(again.inserted(), "the key was free after the rollback");
  }

  @Test
  void aPausedQueuesJobWaitsUntilResumeWakesTheCapsule() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(30),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    try {
      assertTrue(jobs.pause("it_paused"));
      assertFalse(jobs.pause("it_paused"), "already paused");
      assertTrue(jobs.isPaused("it_paused"));

      long held = enqueuer.enqueue("it_paused", "paused-" + UUID.randomUUID(), false);
      // A later job of the same capsule's next queue runs: the claim skipped the paused queue.
      long marker = enqueuer.enqueue("it_unique", "marker-" + UUID.randomUUID(), false);
      awaitState(marker, "completed");
      assertEquals("available", state(held));

      long resumed = System.nanoTime();
      assertTrue(jobs.resume("it_paused"));
      awaitState(held, "completed");
      Duration took = Duration.ofNanos(System.nanoTime() - resumed);
      assertTrue(took.compareTo(Duration.ofSeconds(5)) < 0, "ran " + took + " after the resume");
      assertFalse(jobs.isPaused("it_paused"));
    } finally {
      jobs.resume("it_paused");
    }
  }

  @Test
  void aCronFromTheConfigurationEnqueuesOneJobPerRun() throws Exception {
    // The leader may be elected only once a previous test application's lease is gone.
    Await.until(
        "three cron runs to complete",
        Duration.ofSeconds(120),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE queue = 'it_cron' AND state = 'completed'")
                >= 3);

    long jobsCount = Sql.count(ds, "SELECT count(*) FROM pgbus.job WHERE queue = 'it_cron'");
    long runs =
        Sql.count(ds, "SELECT count(DISTINCT run_at) FROM pgbus.job WHERE queue = 'it_cron'");
    assertEquals(jobsCount, runs, "one job per run");
    assertEquals(
        0,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.job WHERE queue = 'it_cron'"
                + " AND unique_key <> 'cron:it-pulse:' || to_char(run_at AT TIME ZONE 'UTC',"
                + " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"));
    assertNotEquals(0, Sql.count(ds, "SELECT count(*) FROM it_handled WHERE queue = 'it_cron'"));
  }

  private String state(long id) throws Exception {
    return (String) Sql.value(ds, "SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }

  private void awaitState(long id, String expected) throws Exception {
    Await.until(
        "job " + id + " to be " + expected,
        Duration.ofSeconds(30),
        () -> expected.equals(state(id)));
  }
}

package io.pgbus.it;

import static io.pgbus.test.PgbusAssertions.requireEnqueued;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.it.support.Sql;
import io.pgbus.test.Expect;
import io.pgbus.test.JobRun;
import io.pgbus.test.PgbusTestKit;
import io.pgbus.test.RunReport;
import io.pgbus.test.TestClock;
import io.pgbus.test.TestWorker;
import jakarta.ejb.EJB;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.Base64;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * pgbus-test inside a deployment: the kit's worker runs the deployment's own handler bean
 * (RecordingHandler, found by the runtime's registry) in the container's JTA transactions, with the
 * deployment's retry settings, and its clock makes the retry due. No capsule reads it_kit, so only
 * the test runs its jobs.
 */
@ExtendWith(ArquillianExtension.class)
class UsersTestKitIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "testkit",
            "pgbus.retry.base=10m",
            "pgbus.retry.cap=1h",
            "pgbus.retry.jitter=0",
            "pgbus.queue.it_kit_sealed.encrypt=true",
            "pgbus.encryption.key-ids=kit1",
            "pgbus.encryption.key.kit1=" + Base64.getEncoder().encodeToString(new byte[32]))
        .addAsLibraries(Deployments.testKitLibrary());
  }

  @EJB Enqueuer enqueuer;
  @Inject PgbusTestKit kit;

  @Test
  void theKitsWorkerRunsTheDeploymentsHandlerAndItsWritesCommitWithTheJob() throws Exception {
    String text = "kit-" + UUID.randomUUID();
    long id = enqueuer.enqueue("it_kit", text, false);
    assertEquals(
        id,
        requireEnqueued(
                kit.dataSource(),
                "it_kit",
                new Marker(text, false),
                Expect.any().state("available"))
            .id());

    RunReport report = kit.worker().build().drain("it_kit");

    assertEquals(1, report.completed(), report.toString());
    assertEquals(
        1, Sql.count(kit.dataSource(), "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
  }

  @Test
  void aFailedAttemptRollsBackAndRunsAgainOnceTheClockPassesTheDeploymentsBackoff()
      throws Exception {
    TestClock clock = kit.clock();
    TestWorker worker = kit.worker().clock(clock).build();
    String text = "kit-fail-" + UUID.randomUUID();
    long id = enqueuer.enqueue("it_kit", text, true);

    JobRun first = worker.drain("it_kit").runs().get(0);
    assertEquals("retryable", first.state());
    assertTrue(first.error().contains("handler asked to fail for " + text), first.error());
    assertEquals(
        0, Sql.count(kit.dataSource(), "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
    assertEquals(0, worker.drain("it_kit").count(), "not before pgbus.retry.base=10m");

    clock.advance(Duration.ofMinutes(11));
    JobRun second = worker.drain("it_kit").runs().get(0);

    assertEquals(id, second.jobId());
    assertEquals(2, second.attempt());
    assertEquals("retryable", second.state());
  }

  @Test
  void theKitOpensTheJobsOfAnEncryptingQueueWithTheDeploymentsKeys() throws Exception {
    String text = "kit-sealed-" + UUID.randomUUID();
    long id = enqueuer.enqueue("it_kit_sealed", text, false);
    assertEquals(
        0,
        Sql.count(
            kit.dataSource(),
            "SELECT count(*) FROM pgbus.job WHERE id = ? AND payload::text LIKE '%' || ? || '%'",
            id,
            text),
        "the payload is sealed in the table");
    assertEquals(
        id,
        kit.assertions()
            .requireEnqueued(kit.dataSource(), "it_kit_sealed", new Marker(text, false))
            .id());

    RunReport report = kit.worker().build().drain("it_kit_sealed");

    assertEquals(1, report.completed(), report.toString());
    assertEquals(
        1, Sql.count(kit.dataSource(), "SELECT count(*) FROM it_handled WHERE job_id = ?", id));
  }
}

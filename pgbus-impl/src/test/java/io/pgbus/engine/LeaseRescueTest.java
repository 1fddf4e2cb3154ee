package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.NotificationListener.Received;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rescue returns the jobs of crashed workers: an expired lease goes back to retryable (or to dead
 * when the crashed attempt was the last), the queue is woken, and live leases are left alone.
 */
class LeaseRescueTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration EXPIRED = Duration.ofMillis(1);

  private final JobStore store = new JobStore();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void anExpiredLeaseBecomesRetryableNowAndWakesItsQueue() throws Exception {
    List<Long> ids = jobs.enqueue("crashed", 3);
    try (Connection c = db.connect();
        NotificationListener listener = db.listen("crashed")) {
      store.jobClaim(c, List.of("crashed"), 3, "dead-jvm", EXPIRED);
      listener.untilBarrier(); // forget the enqueue's wake

      Map<String, Long> rescued = rescueWhenExpired(c, 3);

      assertThat(rescued).containsExactly(Map.entry("crashed", 3L));
      assertThat(listener.untilBarrier())
          .as("one wake for the queue")
          .containsExactly(new Received("pgbus_crashed", ""));
    }
    for (long id : ids) {
      JobRow row = db.job(id);
      assertThat(row.state()).isEqualTo("retryable");
      assertThat(row.attempt()).as("the crashed attempt counts").isEqualTo(1);
      assertThat(row.leaseExpiresAt()).isNull();
      assertThat(row.runAt()).isBeforeOrEqualTo(row.dbNow());
      assertThat(row.errors())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.attempt()).isEqualTo(1);
                assertThat(e.error()).contains("lease expired", "dead-jvm");
              });
    }
  }

  @Test
  void anExpiredLeaseOnTheLastAttemptMakesTheJobDead() throws Exception {
    long id = jobs.enqueue("last_try", EnqueueOptions.defaults().withMaxAttempts(1));
    try (Connection c = db.connect()) {
      store.jobClaim(c, List.of("last_try"), 1, "dead-jvm", EXPIRED);

      assertThat(rescueWhenExpired(c, 1)).containsEntry("last_try", 1L);
    }
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.finalizedAt()).isNotNull();
    assertThat(row.errors())
        .singleElement()
        .extracting(JobRow.JobError::error)
        .asString()
        .contains("lease expired");
  }

  @Test
  void aLiveLeaseIsLeftAlone() throws Exception {
    long expiring = jobs.enqueue("mixed");
    long live = jobs.enqueue("mixed_live");
    try (Connection c = db.connect()) {
      store.jobClaim(c, List.of("mixed_live"), 1, "alive-jvm", Duration.ofMinutes(5));
      store.jobClaim(c, List.of("mixed"), 1, "dead-jvm", EXPIRED);

      assertThat(rescueWhenExpired(c, 1)).containsOnlyKeys("mixed");
      assertThat(store.jobRescueExpired(c, 10)).as("a second round").isEmpty();
    }
    assertThat(db.job(expiring).state()).isEqualTo("retryable");
    assertThat(db.job(live).state()).isEqualTo("running");
    assertThat(db.job(live).errors()).isEmpty();
  }

  @Test
  void theMaintainerRescuesOnItsOwnAndTheJobRunsAgain() throws Exception {
    long id = jobs.enqueue("maintained");
    try (Connection c = db.connect()) {
      store.jobClaim(c, List.of("maintained"), 1, "dead-jvm", EXPIRED);
    }
    var events = new RecordingEvents();

    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .rescueInterval(Duration.ofMillis(100))
                        .capsule("main", 1, "maintained")
                        .build())
                .events(events)
                .jobs((job, tx) -> null));

    assertThat(events.awaitFinished(id, 2, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    // Counted after the rescue's statement returns, on the maintainer's thread, which a loaded
    // machine may hold back past the job's second run.
    Await.until(
        "the rescue counted", Duration.ofSeconds(10), () -> engine.status().rescued(), n -> n >= 1);
    assertThat(engine.status().rescued()).isEqualTo(1);
    assertThat(db.job(id).state()).isEqualTo("completed");
  }

  private Map<String, Long> rescueWhenExpired(Connection c, long expected) {
    return Await.until(
        "expired leases to be rescued",
        Duration.ofSeconds(10),
        () -> store.jobRescueExpired(c, 100),
        m -> m.values().stream().mapToLong(Long::longValue).sum() == expected);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A queue's policy (pgbus.queue.<name>.*) overrides the global job timeout, backoff and attempts
 * for that queue only; the other queues keep the globals.
 */
class QueuePolicyTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);
  private final RecordingEvents events = new RecordingEvents();

  private EngineConfig config() {
    return engines
        .config()
        .capsule("main", 2, "short", "patient")
        .jobTimeout(Duration.ofMinutes(2))
        .retry(new RetryPolicy(Duration.ofHours(1), Duration.ofHours(2), 0))
        .queuePolicy(
            new QueuePolicy(
                "short", Duration.ofMillis(300), 2, Duration.ofMillis(50), Duration.ofMillis(50)))
        .build();
  }

  @Test
  void aQueuesTimeoutAndBackoffApplyToItsJobsAndNotToTheOtherQueues() throws Exception {
    Engine engine =
        engines.start(
            engines
                .builder(config())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // only the timeout ends it
                      return Outcome.complete();
                    }));
    long id;
    long other;
    try (Connection c = db.connect()) {
      id = engine.jobs().enqueue(c, NewJob.of("short", "{}"));
      other = engine.jobs().enqueue(c, NewJob.of("patient", "{}"));
    }

    // Two attempts of 300 ms with a 50 ms backoff: dead within seconds, where the global timeout
    // (2 min) and backoff (1 h) would have kept it for hours.
    assertThat(events.awaitFinished(id, 2, WAIT).kind()).as("dead").isNull();
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("dead");
    assertThat(row.maxAttempts()).as("pgbus.queue.short.max-attempts").isEqualTo(2);
    assertThat(row.errors())
        .allSatisfy(e -> assertThat(e.error()).contains("timed out after PT0.3S"));
    assertThat(db.job(other).state()).as("the other queue's job runs on").isEqualTo("running");
  }

  @Test
  void aQueuesAttemptsApplyOnlyWhenTheEnqueueChoseNone() throws Exception {
    Jobs jobs = new Jobs(config());
    try (Connection c = db.connect()) {
      long queueDefault = jobs.enqueue(c, NewJob.of("short", "{}"));
      long chosen =
          jobs.enqueue(c, new NewJob("short", "{}", EnqueueOptions.defaults().withMaxAttempts(7)));
      long global = jobs.enqueue(c, NewJob.of("patient", "{}"));
      List<Long> batch =
          jobs.enqueueAll(c, List.of(NewJob.of("short", "{}"), NewJob.of("short", "{}")));
      assertThat(db.job(queueDefault).maxAttempts()).isEqualTo(2);
      assertThat(db.job(chosen).maxAttempts()).isEqualTo(7);
      assertThat(db.job(global).maxAttempts()).isEqualTo(EnqueueOptions.DEFAULT_MAX_ATTEMPTS);
      assertThat(batch).allSatisfy(id -> assertThat(db.job(id).maxAttempts()).isEqualTo(2));
    }
  }
}

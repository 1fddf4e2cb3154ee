package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * pgbus.errors.detail: a failed attempt records the stack trace, only the exception's class and
 * message, or only its class, so personal data in exception messages can be kept out of the table.
 */
class ErrorDetailTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final String PERSONAL = "mailbox full: ada@example.com";

  private final JobFixtures jobs = JobFixtures.in(db);
  private final RecordingEvents events = new RecordingEvents();

  @Test
  void byDefaultTheStackTraceIsRecorded() {
    String error = recordedError(null);
    assertThat(error).contains("IllegalStateException: " + PERSONAL, "\tat ");
  }

  @Test
  void messageDetailRecordsClassAndMessageWithoutFrames() {
    String error = recordedError(ErrorDetail.MESSAGE);
    assertThat(error).isEqualTo("java.lang.IllegalStateException: " + PERSONAL);
  }

  @Test
  void classDetailRecordsOnlyTheExceptionClass() {
    String error = recordedError(ErrorDetail.CLASS);
    assertThat(error).isEqualTo("java.lang.IllegalStateException");
  }

  @Test
  void classDetailKeepsTheMessageOfPgbusOwnTimeout() {
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .jobTimeout(Duration.ofMillis(200))
                    .capsule("main", 1, "detail")
                    .build())
            .errorDetail(ErrorDetail.CLASS)
            .events(events)
            .jobs(
                (job, tx) -> {
                  Thread.sleep(10_000);
                  return null;
                }));
    long id = jobs.enqueue("detail", EnqueueOptions.defaults().withMaxAttempts(1));
    events.awaitFinished(id, 1, WAIT);
    assertThat(db.job(id).errors().get(0).error()).contains("timed out after PT0.2S");
  }

  private String recordedError(ErrorDetail detail) {
    Engine.Builder builder =
        engines
            .builder(engines.config().capsule("main", 1, "detail").build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  throw new IllegalStateException(PERSONAL);
                });
    if (detail != null) {
      builder.errorDetail(detail);
    }
    engines.start(builder);
    long id = jobs.enqueue("detail", EnqueueOptions.defaults().withMaxAttempts(1));
    events.awaitFinished(id, 1, WAIT);
    return db.job(id).errors().get(0).error();
  }
}

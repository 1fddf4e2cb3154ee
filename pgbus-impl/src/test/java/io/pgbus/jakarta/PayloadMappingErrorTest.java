package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue #29, item 5: a payload that does not map onto its handler's type fails the attempt with
 * pgbus's own message, naming the job and the type, and keeps JSON-B's exception as its cause;
 * before, the stored error was JSON-B's bare exception (the engine unwrapped every cause).
 */
class PayloadMappingErrorTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Jsonb JSONB = JsonbBuilder.create();

  /** A handler's payload type that the fixtures' {"n": 0} does not fit. */
  public static final class Order {
    public List<String> n;
  }

  @AfterAll
  static void close() throws Exception {
    JSONB.close();
  }

  @Test
  void aPayloadThatDoesNotMapIsRecordedWithPgbusOwnMessageAndItsCause() {
    var events = new RecordingEvents();
    engines.start(
        engines
            .builder(engines.config().capsule("main", 1, "mapping").build())
            .events(events)
            .jobs(
                (job, tx) -> {
                  HandlerRegistry.payload(JSONB, job, Order.class);
                  return Outcome.complete();
                }));
    long id = JobFixtures.in(db).enqueue("mapping", EnqueueOptions.defaults().withMaxAttempts(1));
    events.awaitFinished(id, 1, Duration.ofSeconds(20));

    String error = db.job(id).errors().get(0).error();
    assertThat(error)
        .startsWith(
            "io.pgbus.PgbusException: pgbus: payload of job "
                + id
                + " does not map to "
                + Order.class.getTypeName()
                + ": ")
        .contains("Caused by: ");
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A notification wakes only the capsules that read its queue: the job runs at once, long before the
 * poll ceiling, and a capsule reading other queues issues no claim for it.
 */
class WakeRoutingTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration CEILING = Duration.ofSeconds(60);

  /** How long a capsule must stay without claims to count as settled. */
  private static final Duration SETTLED = Duration.ofMillis(300);

  @Test
  void aJobRunsPromptlyAndOnlyTheCapsuleReadingItsQueueClaims() {
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("alpha", 2, "queue_a")
                        .capsule("beta", 2, "queue_b")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    Capsule alpha = capsule(engine, "alpha");
    Capsule beta = capsule(engine, "beta");
    // Settle the start-up claims: one job through each capsule, then a quiet moment.
    long fenceA = JobFixtures.in(db).enqueue("queue_a");
    long fenceB = JobFixtures.in(db).enqueue("queue_b");
    events.awaitFinished(fenceA, 1, Duration.ofSeconds(10));
    events.awaitFinished(fenceB, 1, Duration.ofSeconds(10));
    awaitSettled(alpha, beta);
    long alphaBefore = alpha.status().claims();
    long betaBefore = beta.status().claims();
    long notificationsBefore = engine.notifier().notifications();

    var ids = new ArrayList<Long>();
    for (int i = 0; i < 5; i++) {
      long started = System.nanoTime();
      long id = JobFixtures.in(db).enqueue("queue_a");
      events.awaitFinished(id, 1, CEILING.dividedBy(6));
      assertThat(Duration.ofNanos(System.nanoTime() - started))
          .as("from enqueue to done")
          .isLessThan(Duration.ofSeconds(5));
      ids.add(id);
    }
    awaitSettled(alpha, beta);

    assertThat(beta.status().claims())
        .as("claims by the capsule that does not read queue_a")
        .isEqualTo(betaBefore);
    assertThat(alpha.status().claims()).isGreaterThanOrEqualTo(alphaBefore + ids.size());
    assertThat(alpha.status().claimed()).isEqualTo(ids.size() + 1);
    assertThat(engine.notifier().notifications() - notificationsBefore).isEqualTo(ids.size());
  }

  private static Capsule capsule(Engine engine, String name) {
    return engine.capsules().stream()
        .filter(c -> c.status().name().equals(name))
        .findFirst()
        .orElseThrow();
  }

  /** Waits until none of the capsules has claimed or run anything for {@link #SETTLED}. */
  private static void awaitSettled(Capsule... capsules) {
    var last = new long[] {-1};
    var since = new long[] {System.nanoTime()};
    Await.until(
        "the capsules to settle",
        Duration.ofSeconds(10),
        () -> {
          long activity = 0;
          for (Capsule c : List.of(capsules)) {
            activity += c.status().claims() * 1000 + c.status().inFlight();
          }
          if (activity != last[0]) {
            last[0] = activity;
            since[0] = System.nanoTime();
          }
          return System.nanoTime() - since[0] >= SETTLED.toNanos();
        });
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.ChildJvm;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A JVM killed with SIGKILL between an enqueue's commit and its wake ({@code coalesced} mode, issue
 * #26) loses the wake, never the job: 100 times, another engine runs each job once, within its poll
 * ceiling of the commit.
 *
 * <p>100 JVM starts take minutes on a loaded 2-core machine (138 s at load 20), so the test runs
 * only when asked: {@code -Dpgbus.kill-test=true}.
 */
@EnabledIfSystemProperty(named = "pgbus.kill-test", matches = "true")
class CommitThenKillTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final int KILLS = 100;
  private static final int AT_ONCE = 4;
  private static final Duration POLL_CEILING = Duration.ofSeconds(2);

  /** The poll ceiling, plus a claim's and a loaded machine's time. */
  private static final Duration BOUND = POLL_CEILING.plusSeconds(1);

  @Test
  void everyJobCommittedBeforeItsJvmWasKilledRunsOnceWithinThePollCeiling() throws Exception {
    var events = new RecordingEvents();
    engines.start(
        engines
            .builder(
                engines
                    .config()
                    .capsule("survivor", 4, "killed_wake")
                    .pollInterval(POLL_CEILING)
                    .pollCeiling(POLL_CEILING)
                    .build())
            .events(events)
            .jobs((job, tx) -> Outcome.complete()));

    ExecutorService kills = Executors.newFixedThreadPool(AT_ONCE);
    List<Future<Long>> ids = new ArrayList<>();
    for (int i = 0; i < KILLS; i++) {
      ids.add(kills.submit(CommitThenKillTest::commitThenKill));
    }
    var committed = new ArrayList<Long>();
    for (Future<Long> f : ids) {
      committed.add(f.get());
    }
    kills.shutdown();

    Await.until(
        "every job to complete",
        BOUND.multipliedBy(2),
        () -> db.jobCount("killed_wake", "completed") == KILLS);
    assertThat(committed).doesNotHaveDuplicates().hasSize(KILLS);
    assertThat(events.finished()).hasSize(KILLS);
    assertThat(db.queryLong("SELECT max(attempt) FROM pgbus.job WHERE queue = 'killed_wake'"))
        .isEqualTo(1);
    // created_at is the enqueuing transaction's start, before its commit: a conservative start.
    long slowestMs =
        db.queryLong(
            "SELECT (max(extract(epoch FROM attempted_at - created_at)) * 1000)::bigint"
                + " FROM pgbus.job WHERE queue = 'killed_wake'");
    assertThat(Duration.ofMillis(slowestMs)).isLessThanOrEqualTo(BOUND);
  }

  private static long commitThenKill() throws Exception {
    try (ChildJvm child = ChildJvm.start(CommitThenHangWorker.class, db.jdbcUrl(), "killed_wake")) {
      String line = child.await("COMMITTED ", Duration.ofMinutes(5)); // a JVM start under load
      assertThat(child.kill9()).isEqualTo(137);
      return Long.parseLong(line.substring("COMMITTED ".length()));
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Concurrent claimers never get the same job twice, and no job is left behind. */
class ExactlyOnceClaimTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final JobStore store = new JobStore();

  @Test
  void eightConcurrentClaimersShareTenThousandJobsWithoutDuplicatesOrLosses() throws Exception {
    int total = 10_000;
    int threads = 8;
    int batch = 7;
    Set<Long> enqueued = Set.copyOf(JobFixtures.in(db).enqueue("exactly_once", total));
    Set<Long> claimed = ConcurrentHashMap.newKeySet();
    var duplicates = new AtomicInteger();
    var oversized = new AtomicInteger();
    var refusedCompletions = new AtomicInteger();

    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      var gate = new CountDownLatch(1);
      var workers = new ArrayList<Future<Integer>>();
      for (int t = 0; t < threads; t++) {
        String worker = "claimer-" + t;
        workers.add(
            pool.submit(
                () -> {
                  gate.await();
                  int mine = 0;
                  try (Connection c = db.connect()) {
                    while (true) {
                      List<ClaimedJob> jobs =
                          store.jobClaim(
                              c, List.of("exactly_once"), batch, worker, Duration.ofMinutes(5));
                      if (jobs.isEmpty()) {
                        return mine; // Nothing is available and nothing ever fails: all claimed.
                      }
                      if (jobs.size() > batch) {
                        oversized.incrementAndGet();
                      }
                      for (ClaimedJob job : jobs) {
                        if (!claimed.add(job.id())) {
                          duplicates.incrementAndGet();
                        }
                        if (!store.jobComplete(c, job)) {
                          refusedCompletions.incrementAndGet();
                        }
                        mine++;
                      }
                    }
                  }
                }));
      }
      gate.countDown();
      int sum = 0;
      for (Future<Integer> w : workers) {
        sum += w.get(120, TimeUnit.SECONDS);
      }
      assertThat(sum).as("claims made").isEqualTo(total);
    } finally {
      pool.shutdownNow();
    }

    assertThat(duplicates).as("jobs claimed twice").hasValue(0);
    assertThat(oversized).as("claims over the batch size").hasValue(0);
    assertThat(refusedCompletions).as("completions refused").hasValue(0);
    assertThat(claimed).as("claimed ids").isEqualTo(enqueued);
    assertThat(db.jobCount("exactly_once", "completed")).isEqualTo(total);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE attempt <> 1")).isZero();
  }

  @Test
  void anEngineWithEightSlotsRunsEachOfTwoThousandJobsOnceInsideItsTransaction() throws Exception {
    int total = 2_000;
    db.update("CREATE TABLE processed (job_id bigint PRIMARY KEY, worker text NOT NULL)");
    Set<Long> enqueued = Set.copyOf(JobFixtures.in(db).enqueue("engine_once", total));
    var events = new RecordingEvents();
    var handlerThrew = new AtomicInteger();
    EngineConfig config = engines.config().capsule("main", 8, "engine_once").build();

    engines.start(
        engines
            .builder(config)
            .events(events)
            .jobs(
                (job, tx) -> {
                  try (PreparedStatement ps =
                      tx.prepareStatement("INSERT INTO processed VALUES (?, ?)")) {
                    ps.setLong(1, job.id());
                    ps.setString(2, Thread.currentThread().getName());
                    ps.executeUpdate();
                  } catch (Exception e) {
                    handlerThrew.incrementAndGet();
                    throw e;
                  }
                  return Outcome.complete();
                }));

    events.awaitFinished(Outcome.Kind.COMPLETE, total, Duration.ofSeconds(90));

    assertThat(handlerThrew)
        .as("handler failures (a unique violation means a double run)")
        .hasValue(0);
    assertThat(events.finished()).hasSize(total);
    assertThat(db.queryLongs("SELECT job_id FROM processed"))
        .containsExactlyInAnyOrderElementsOf(enqueued);
    assertThat(db.jobCount("engine_once", "completed")).isEqualTo(total);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE attempt <> 1")).isZero();
    assertThat(db.queryLong("SELECT count(DISTINCT worker) FROM processed"))
        .as("handler threads used")
        .isGreaterThan(1);
  }
}

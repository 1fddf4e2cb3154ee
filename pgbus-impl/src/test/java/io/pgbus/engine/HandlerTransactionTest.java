package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Jobs whose handlers run in their own transactions ({@code JobTransaction.HANDLER}, issue #14):
 * the handler gets no transaction, commits on its own, and the job's outcome is fenced on (id,
 * attempt, running) and committed in a transaction of its own, so a job that was rescued or
 * cancelled while its handler ran is not changed by that handler's late outcome.
 */
class HandlerTransactionTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.audit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);
  private final JobStore store = new JobStore();

  @BeforeEach
  void businessTable() {
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint, attempt int, step text)");
    db.update("DELETE FROM business");
  }

  private Engine start(EngineConfig.Builder config, JobFunction handler) {
    Engine e =
        engines.start(
            engines
                .builder(config.build())
                .events(events)
                .handlerTransactions(Set.of("own"))
                .jobs(handler));
    TestEngines.awaitDelivering(e);
    return e;
  }

  @Test
  void theHandlerRunsWithoutTheJobsTransactionAndItsOutcomeCommitsOnItsOwn() throws Exception {
    var txSeen = new AtomicBoolean(true);
    var midwayVisible = new AtomicLong(-1);
    start(
        engines.config().capsule("main", 2, "own", "shared"),
        (job, tx) -> {
          if (job.queue().equals("own")) {
            txSeen.set(tx != null);
            write(job, "first"); // commits at once, in a transaction of the handler's own
            midwayVisible.set(
                db.queryLong("SELECT count(*) FROM business WHERE job_id = ?", job.id()));
            write(job, "second");
          } else {
            try (PreparedStatement ps =
                tx.prepareStatement("INSERT INTO business VALUES (?, ?, 'shared')")) {
              ps.setLong(1, job.id());
              ps.setInt(2, job.attempt());
              ps.executeUpdate();
            }
            midwayVisible.compareAndSet(
                -1, db.queryLong("SELECT count(*) FROM business WHERE job_id = ?", job.id()));
          }
          return Outcome.completeJson("{\"rows\": 2}");
        });

    long own = jobs.enqueue("own");
    assertThat(events.awaitFinished(own, 1, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);

    assertThat(txSeen).as("a transaction was handed to the handler").isFalse();
    assertThat(midwayVisible.get()).as("its first write, seen while it still ran").isEqualTo(1);
    JobRow row = db.job(own);
    assertThat(row.state()).isEqualTo("completed");
    assertThat(row.attempt()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE result IS NOT NULL")).isOne();
    assertThat(db.queryLongs("SELECT attempt FROM business WHERE job_id = ?", own))
        .containsExactly(1L, 1L);

    // The default mode is unchanged next to it: the write is invisible until the completion.
    midwayVisible.set(-1);
    long shared = jobs.enqueue("shared");
    assertThat(events.awaitFinished(shared, 1, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(midwayVisible.get()).as("the default mode's write, seen mid-job").isZero();
  }

  @Test
  void aFailedAttemptKeepsWhatItsHandlerCommittedAndIsRetried() throws Exception {
    start(
        engines.config().capsule("main", 1, "own"),
        (job, tx) -> {
          write(job, "before the failure");
          throw new IllegalStateException("export went wrong");
        });

    long id = jobs.enqueue("own");
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.RETRY);

    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("retryable");
    assertThat(row.errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("export went wrong"));
    assertThat(db.queryLong("SELECT count(*) FROM business WHERE job_id = ?", id)).isOne();
  }

  @Test
  void aRescuedJobIsNotChangedByItsFormerHandlersLateCompletion() throws Exception {
    var started = new CountDownLatch(1);
    var mayFinish = new CountDownLatch(1);
    engines.start(
        engines
            .builder(engines.config().capsule("main", 1, "own").build())
            .maintenance(false)
            .events(events)
            .handlerTransactions(Set.of("own"))
            .jobs(
                (job, tx) -> {
                  write(job, "attempt " + job.attempt());
                  if (job.attempt() == 1) {
                    started.countDown();
                    assertThat(mayFinish.await(30, TimeUnit.SECONDS)).isTrue();
                  }
                  return Outcome.complete(); // well within its job timeout, after the rescue
                }));
    long id = jobs.enqueue("own");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    // The lease runs out while the handler works (its JVM looked dead), and the job is rescued.
    db.update(
        "UPDATE pgbus.job SET lease_expires_at = now() - interval '1 second' WHERE id = ?", id);
    try (Connection c = db.connect()) {
      assertThat(store.jobRescueExpired(c, 10).values()).containsExactly(1L);
    }
    JobRow rescued = db.job(id);

    assertThat(rescued.state()).isEqualTo("retryable");
    mayFinish.countDown();

    assertThat(events.awaitFinished(id, 1, WAIT).kind())
        .as("what the stale attempt became: a lost lease")
        .isNull();
    // The job is run again (the slot is free now) and completes by its second attempt only.
    assertThat(events.awaitFinished(id, 2, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);
    JobRow after = db.job(id);
    assertThat(after.state()).isEqualTo("completed");
    assertThat(after.attempt()).isEqualTo(2);
    assertThat(after.errors()).isEqualTo(rescued.errors()); // the late completion wrote nothing
    assertThat(db.queryLongs("SELECT attempt FROM business WHERE job_id = ? ORDER BY 1", id))
        .as("what the stale handler committed itself stays: at least once, not exactly once")
        .containsExactly(1L, 2L);
  }

  @Test
  void aJobReleasedByTheDrainIsNotCompletedByItsHandlerFinishingLater() throws Exception {
    var started = new CountDownLatch(1);
    var mayFinish = new CountDownLatch(1);
    Engine engine =
        start(
            engines.config().capsule("main", 1, "own").drainTimeout(Duration.ofMillis(300)),
            (job, tx) -> {
              write(job, "outlived the drain");
              started.countDown();
              assertThat(mayFinish.await(30, TimeUnit.SECONDS)).isTrue();
              return Outcome.complete();
            });
    long id = jobs.enqueue("own");
    JobRow before = db.job(id);
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    assertThat(engine.stop()).as("slots still busy after the drain").isOne();
    JobRow released = db.job(id);
    assertThat(released.state()).isEqualTo("available");
    // The attempt is given back as budget; the attempt number stays, as the fence needs. (The
    // budget as enqueued, attempt 0: `before` may have been read after the claim already.)
    assertThat(released.maxAttempts() - released.attempt())
        .as("attempts left")
        .isEqualTo(before.maxAttempts());
    mayFinish.countDown();

    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isNull();
    JobRow after = db.job(id);
    assertThat(after.state()).isEqualTo("available");
    assertThat(after.attempt()).isEqualTo(released.attempt());
    assertThat(after.maxAttempts()).isEqualTo(released.maxAttempts());
    assertThat(after.finalizedAt()).isNull();
  }

  @Test
  void aCancelledJobEndsCancelledWhateverItsHandlerReturnsAndKeepsWhatItCommitted()
      throws Exception {
    var started = new CountDownLatch(1);
    var interrupted = new AtomicBoolean();
    start(
        engines.config().capsule("main", 1, "own").jobTimeout(Duration.ofMinutes(2)),
        (job, tx) -> {
          write(job, "before the cancel");
          started.countDown();
          try {
            Thread.sleep(TimeUnit.MINUTES.toMillis(1));
          } catch (InterruptedException e) {
            interrupted.set(true); // and, ignoring it, report success: too late
          }
          write(job, "after the cancel");
          return Outcome.complete();
        });
    Engine operator = engines.start(engines.config().build(), (job, tx) -> Outcome.complete());

    long id = jobs.enqueue("own");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    try (Connection c = db.connect()) {
      assertThat(operator.jobs().cancel(c, id, "erin")).isTrue();
    }

    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.CANCEL);
    assertThat(interrupted).as("the handler was interrupted").isTrue();
    JobRow row = db.job(id);
    assertThat(row.state()).isEqualTo("cancelled");
    assertThat(row.errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("while running", "own transactions"));
    assertThat(db.queryLong("SELECT count(*) FROM business WHERE job_id = ?", id)).isEqualTo(2);
  }

  @Test
  void aHandlerPastItsJobTimeoutIsInterruptedAndItsAttemptFails() throws Exception {
    start(
        engines.config().capsule("main", 1, "own").jobTimeout(Duration.ofMillis(300)),
        (job, tx) -> {
          write(job, "started");
          Thread.sleep(TimeUnit.MINUTES.toMillis(1));
          return Outcome.complete();
        });

    long id = jobs.enqueue("own");
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.RETRY);
    assertThat(db.job(id).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("timed out", "JobTransaction.HANDLER"));
  }

  @Test
  void aCapsuleThatBatchesAHandlerTransactionQueueIsRefused() {
    EngineConfig config =
        engines.config().capsule(new CapsuleConfig("bulk", List.of("fast", "own"), 2, 10)).build();
    assertThatThrownBy(() -> engines.builder(config).handlerTransactions(Set.of("own")).build())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.capsule.bulk.jobs-per-transaction is 10")
        .hasMessageContaining("'own'")
        .hasMessageContaining("set it to 1");
    // One job per transaction, or another capsule for the queue, is fine.
    engines.builder(config).handlerTransactions(Set.of("other")).build();
  }

  private static void write(RunningJob job, String step) throws Exception {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement("INSERT INTO business VALUES (?, ?, ?)")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setString(3, step);
      ps.executeUpdate();
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Cancelling a running job from another JVM (issue #14): the request travels as NOTIFY
 * "pgbus-cancel" to the engine that runs the job, which checks it against the database, interrupts
 * the handler and settles the job as cancelled with the handler's writes rolled back. The second
 * engine here stands for the other JVM: it runs no job and only calls {@link Jobs#cancel}.
 */
class CancelRunningJobTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.audit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);
  private final CountDownLatch started = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicBoolean sawCancellation = new AtomicBoolean();
  private Engine runner;
  private Engine operator;

  @BeforeEach
  void twoEnginesOneRunningJobs() {
    db.update("CREATE TABLE IF NOT EXISTS business (job_id bigint, attempt int)");
    db.update("DELETE FROM business");
    runner =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule(
                            "main", 3, "hanging", "cooperative", "blocking", "quick", "sleeping")
                        .jobTimeout(Duration.ofMinutes(2))
                        .build())
                .events(events)
                .jobs(this::handle));
    operator = engines.start(engines.config().build(), (job, tx) -> Outcome.complete());
    TestEngines.awaitDelivering(runner);
  }

  private Outcome handle(RunningJob job, Connection tx) throws Exception {
    write(tx, job);
    started.countDown();
    switch (job.queue()) {
      case "hanging" -> Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // the interrupt ends it
      case "cooperative" -> {
        // Busy without blocking, so the interrupt alone would not stop it: it asks the context.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!job.cancellationRequested() && System.nanoTime() < until) {
          Thread.onSpinWait();
        }
        sawCancellation.set(job.cancellationRequested());
        return Outcome.complete(); // too late: the job ends cancelled all the same
      }
      case "blocking" -> {
        awaitIgnoringInterrupts(release);
        sawCancellation.set(Thread.currentThread().isInterrupted() || job.cancellationRequested());
      }
      case "sleeping" -> {
        // Blocked in a statement of its transaction: an interrupt alone does not reach it.
        try (PreparedStatement ps = tx.prepareStatement("SELECT pg_sleep(10)")) {
          ps.execute();
        }
      }
      default -> {}
    }
    return Outcome.complete();
  }

  @Test
  void aCancelFromAnotherEngineInterruptsTheRunningHandlerWithinOneSecondAndRollsItsWritesBack()
      throws Exception {
    long id = jobs.enqueue("hanging");
    assertThat(started.await(10, TimeUnit.SECONDS)).as("the handler started").isTrue();

    long cancelled = System.nanoTime();
    assertThat(cancel(id)).as("the request was recorded").isTrue();
    RecordingEvents.Finished finished = events.awaitFinished(id, 1, WAIT);
    Duration toStopped = Measurements.since(cancelled);

    assertThat(finished.kind()).isEqualTo(Outcome.Kind.CANCEL);
    assertThat(toStopped).isLessThan(Duration.ofSeconds(1));
    assertThat(db.job(id).state()).isEqualTo("cancelled");
    assertThat(db.job(id).errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("cancelled", "while running"));
    assertThat(db.queryLong("SELECT count(*) FROM business")).as("writes that committed").isZero();
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE job_id = ? AND action = 'cancel'"
                    + " AND actor = 'erin' AND detail->>'attempt' = '1'",
                id))
        .as("the audit row")
        .isEqualTo(1);
    Measurements.record(
        "cancel of a running job: commit -> handler stopped, job cancelled", toStopped);
  }

  @Test
  void aCancelStopsAHandlerInsideASqlStatementWithinTwoSecondsNotWhenTheStatementEnds()
      throws Exception {
    long id = jobs.enqueue("sleeping");
    assertThat(started.await(10, TimeUnit.SECONDS)).as("the handler started").isTrue();
    Await.until(
        "the handler's pg_sleep",
        WAIT,
        () ->
            db.queryLong(
                "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(10)'"
                    + " AND datname = current_database()"),
        n -> n == 1);

    long cancelled = System.nanoTime();
    assertThat(cancel(id)).as("the request was recorded").isTrue();
    RecordingEvents.Finished finished = events.awaitFinished(id, 1, WAIT);
    Duration toStopped = Measurements.since(cancelled);

    assertThat(finished.kind()).isEqualTo(Outcome.Kind.CANCEL);
    assertThat(toStopped).isLessThan(Duration.ofSeconds(2));
    assertThat(db.job(id).state()).isEqualTo("cancelled");
    assertThat(db.queryLong("SELECT count(*) FROM business")).as("writes that committed").isZero();
    Measurements.record(
        "cancel of a job inside pg_sleep(10): commit -> handler stopped, job cancelled", toStopped);
  }

  @Test
  void aCooperativeHandlerSeesTheCancellationAndTheJobEndsCancelledWhateverItReturns()
      throws Exception {
    long id = jobs.enqueue("cooperative");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    assertThat(cancel(id)).isTrue();

    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.CANCEL);
    assertThat(sawCancellation).as("JobContext.cancellationRequested()").isTrue();
    assertThat(db.job(id).state()).isEqualTo("cancelled");
    assertThat(db.queryLong("SELECT count(*) FROM business")).isZero();
  }

  @Test
  void aCancelOfAJobThatFinishedMeanwhileChangesNothing() throws Exception {
    long id = jobs.enqueue("quick");
    events.awaitFinished(id, 1, WAIT);
    assertThat(db.job(id).state()).isEqualTo("completed");

    assertThat(cancel(id)).as("nothing to cancel").isFalse();
    // A request that was sent while it ran, heard after it ended, finds no attempt to stop.
    db.queryLong("SELECT count(*) FROM pg_notify('pgbus-cancel', ? || ':1')", id);
    long probe = jobs.enqueue("quick");
    events.awaitFinished(probe, 1, WAIT);

    assertThat(db.job(id).state()).isEqualTo("completed");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE cancel_attempt IS NOT NULL"))
        .isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit")).as("audit rows").isZero();
    assertThat(db.queryLong("SELECT count(*) FROM business")).isEqualTo(2);
  }

  @Test
  void aForgedCancelNotificationStopsNothing() throws Exception {
    long id = jobs.enqueue("blocking");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    // Any login may NOTIFY any channel: the real id and attempt without a recorded request, and
    // payloads of every wrong shape, the longest NOTIFY allows included.
    for (String forged :
        new String[] {
          id + ":1",
          "",
          "x",
          id + ":1:1",
          "-" + id + ":1",
          id + ":0",
          "0" + id + ":1",
          " " + id + ":1",
          "99999999999999999999:1",
          id + ":99999999999",
          "9".repeat(7990)
        }) {
      db.queryLong("SELECT count(*) FROM pg_notify('pgbus-cancel', ?)", forged);
    }
    // Notifications arrive in commit order: once a real cancel that came later has stopped its
    // job, every forged one has been heard and dropped.
    long later = jobs.enqueue("hanging");
    Await.until(
        "the second job to run", WAIT, () -> db.job(later).state(), s -> s.equals("running"));
    assertThat(cancel(later)).isTrue();
    assertThat(events.awaitFinished(later, 1, WAIT).kind()).isEqualTo(Outcome.Kind.CANCEL);

    assertThat(db.job(id).state()).as("the forged target").isEqualTo("running");
    release.countDown();
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.COMPLETE);
    assertThat(sawCancellation).as("interrupted or flagged").isFalse();
    assertThat(runner.listenerState()).isEqualTo(ListenerState.DELIVERING);
    assertThat(db.queryLongs("SELECT job_id FROM business WHERE job_id = ?", id))
        .as("its writes committed")
        .containsExactly(id);
  }

  private boolean cancel(long id) throws Exception {
    try (Connection c = db.connect()) {
      return operator.jobs().cancel(c, id, "erin");
    }
  }

  private static void write(Connection tx, RunningJob job) throws Exception {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO business VALUES (?, ?)")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.executeUpdate();
    }
  }

  private static void awaitIgnoringInterrupts(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        if (latch.await(30, TimeUnit.SECONDS)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}

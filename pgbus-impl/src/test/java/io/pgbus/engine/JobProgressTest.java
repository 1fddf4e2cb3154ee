package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobView;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link io.pgbus.JobContext#progress} (issue #14): coalesced to about one write a second, written
 * outside the handler's transaction (visible while the job runs), fenced by (id, attempt, running),
 * bounded, and shown by the admin API's job view.
 */
class JobProgressTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WAIT = Duration.ofSeconds(20);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);
  private final CountDownLatch reported = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicReference<RunningJob> handled = new AtomicReference<>();

  @BeforeEach
  void engineWithAReportingHandler() {
    engines.start(
        engines
            .builder(engines.config().capsule("main", 1, "report").build())
            .events(events)
            .jobs(this::handle));
  }

  /** Reports ten times in about 100 ms, then waits for the test before it completes. */
  private Outcome handle(RunningJob job, Connection tx) throws Exception {
    handled.set(job);
    for (int i = 1; i <= 10; i++) {
      job.progress(i * 10, "step " + i);
      Thread.sleep(10); // the handler's work between two reports
    }
    reported.countDown();
    release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
    return Outcome.complete();
  }

  @Test
  void tenReportsInATenthOfASecondCostAtMostTwoWritesAndTheRowShowsTheLatest() throws Exception {
    long id = jobs.enqueue("report");
    assertThat(reported.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    // The handler's transaction is still open: the first report is visible all the same.
    assertThat(percent(id)).as("progress seen while the job runs").isEqualTo(10);

    release.countDown();
    events.awaitFinished(id, 1, WAIT);
    assertThat(db.job(id).state()).isEqualTo("completed");
    assertThat(handled.get().reports().writes()).as("writes").isBetween(1, 2);
    assertThat(percent(id))
        .as("the latest report, written when the handler returned")
        .isEqualTo(100);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE id = ? AND progress->>"
                    + "'message' = 'step 10' AND (progress->>'attempt')::int = 1",
                id))
        .isEqualTo(1);
  }

  @Test
  void aReportAfterTheJobFinishedIsNotWritten() throws Exception {
    long id = jobs.enqueue("report");
    release.countDown();
    events.awaitFinished(id, 1, WAIT);
    RunningJob job = handled.get();
    int writes = job.reports().writes();

    job.progress(5, "late"); // a handler that kept its context past its return
    assertThat(job.reports().writes()).as("dropped").isEqualTo(writes);

    // And the fence itself: a write that races the end changes nothing.
    try (Connection c = db.connect()) {
      boolean written =
          new JobStore()
              .jobProgress(c, job.claimed(), new JobProgress.Report(5, "late", Instant.now()));
      assertThat(written).isFalse();
    }
    assertThat(percent(id)).isEqualTo(100);
  }

  @Test
  void aProgressWriteThatFailsNeverFailsTheJob() throws Exception {
    db.update(
        """
        CREATE FUNCTION refuse_progress() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.progress IS DISTINCT FROM OLD.progress THEN
            RAISE EXCEPTION 'progress writes are down';
          END IF;
          RETURN NEW;
        END $$""");
    db.update(
        "CREATE TRIGGER refuse_progress BEFORE UPDATE ON pgbus.job FOR EACH ROW"
            + " EXECUTE FUNCTION refuse_progress()");
    try {
      long id = jobs.enqueue("report");
      release.countDown();
      events.awaitFinished(id, 1, WAIT);
      assertThat(db.job(id).state()).isEqualTo("completed");
      assertThat(handled.get().reports().writes()).as("writes tried").isPositive();
      assertThat(
              db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ? AND progress IS NULL", id))
          .isEqualTo(1);
    } finally {
      db.update("DROP TRIGGER refuse_progress ON pgbus.job");
      db.update("DROP FUNCTION refuse_progress()");
    }
  }

  @Test
  void outOfBoundsReportsAreRefusedWithAnErrorNamingTheValue() {
    RunningJob job = new RunningJob(ClaimedJobs.claimed(1, "q"));
    assertThatThrownBy(() -> job.progress(101, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("101")
        .hasMessageContaining("0 to 100");
    assertThatThrownBy(() -> job.progress(-1, "x")).hasMessageContaining("-1");
    assertThatThrownBy(() -> job.progress(50, "m".repeat(201)))
        .hasMessageContaining("201 characters")
        .hasMessageContaining("at most 200");
    job.progress(0, "m".repeat(200)); // the bounds themselves are fine
    job.progress(100, null);
  }

  @Test
  void theDatabaseRefusesAProgressOfTheWrongShape() {
    long id = jobs.enqueue("other");
    assertThatThrownBy(
            () ->
                db.update("UPDATE pgbus.job SET progress = '{\"percent\": 101}' WHERE id = ?", id))
        .hasStackTraceContaining("job_progress_shape");
    assertThatThrownBy(
            () ->
                db.update(
                    "UPDATE pgbus.job SET progress = jsonb_build_object('percent', 1, 'message',"
                        + " repeat('m', 201)) WHERE id = ?",
                    id))
        .hasStackTraceContaining("job_progress_shape");
  }

  @Test
  void theAdminJobViewCarriesTheProgress() throws Exception {
    long id = jobs.enqueue("report");
    release.countDown();
    events.awaitFinished(id, 1, WAIT);
    JobAdminStore admin = new JobAdminStore();
    try (Connection c = db.connect()) {
      JobView one = admin.jobView(c, id).orElseThrow();
      assertThat(one.progress()).contains("\"percent\": 100", "\"message\": \"step 10\"");
      JobView listed =
          admin.jobSearch(c, JobFilter.all().withQueue("report"), null, 10).jobs().get(0);
      assertThat(listed.progress()).isEqualTo(one.progress());
    }
  }

  private long percent(long id) throws SQLException {
    return db.queryLong("SELECT (progress->>'percent')::bigint FROM pgbus.job WHERE id = ?", id);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.CountingDataSource;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A flood of forged "pgbus-cancel" NOTIFYs for a job that runs (issue #23, item 6): any login may
 * send them, with the real id and attempt. Each used to cost a database check and a WARNING line;
 * now the checks are coalesced (at most one statement per {@link HeardCancels#GAP}) and the line is
 * logged once, then at most once a minute with a count. A real cancel after the flood still works.
 */
class ForgedCancelFloodTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.audit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final int FORGED = 1000;
  private static final Duration WAIT = Duration.ofSeconds(30);

  private static final SimpleFormatter FORMAT = new SimpleFormatter();

  private final Logger runnerLog = Logger.getLogger(JobRunner.class.getName());
  private final List<String> warnings = new CopyOnWriteArrayList<>();
  private final Handler capture =
      new Handler() {
        @Override
        public void publish(LogRecord r) {
          if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
            warnings.add(FORMAT.formatMessage(r));
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  @BeforeEach
  void captureTheRunnersWarnings() {
    runnerLog.addHandler(capture);
  }

  @AfterEach
  void stopCapturing() {
    runnerLog.removeHandler(capture);
  }

  @Test
  void aThousandForgedCancelsCostAFewLogLinesAndABoundedNumberOfChecksAndARealOneStillWorks()
      throws Exception {
    var started = new CountDownLatch(1);
    var events = new RecordingEvents();
    var pool = new CountingDataSource(db.dataSource());
    Engine runner =
        engines.start(
            Engine.builder(engines.config().capsule("main", 1, "target").build(), pool.dataSource())
                .listenerConnections(engines.listenerConnections())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      started.countDown();
                      Thread.sleep(TimeUnit.MINUTES.toMillis(1)); // only an interrupt ends it
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(runner);
    long id = JobFixtures.in(db).enqueue("target");
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    long checks0 = pool.statementsContaining("cancel_attempt");

    long flood = System.nanoTime();
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement("SELECT pg_notify('pgbus-cancel', ?)")) {
      for (int i = 0; i < FORGED; i++) {
        ps.setString(1, id + ":1"); // the real id and attempt; one transaction each
        ps.execute();
      }
    }
    // Notifications arrive in commit order: once a wake of the job's queue sent after the flood
    // was heard, every forged request was heard too. (Only then the real cancel: once it has
    // committed, a check of a forged copy of it would be confirmed.)
    long wakes = runner.notifier().notifications();
    db.queryLong("SELECT count(pg_notify('pgbus_target', ''))");
    Await.until("the wake after the flood", WAIT, runner.notifier()::notifications, n -> n > wakes);
    try (Connection c = db.connect()) {
      assertThat(runner.jobs().cancel(c, id, "erin")).isTrue();
    }
    assertThat(events.awaitFinished(id, 1, WAIT).kind()).isEqualTo(Outcome.Kind.CANCEL);
    Duration took = Measurements.since(flood);
    long checks = pool.statementsContaining("cancel_attempt") - checks0;

    List<String> forgedLines = warnings.stream().filter(w -> w.contains("pgbus-cancel")).toList();
    Measurements.record(FORGED + " forged cancels, then a real one: flood -> job cancelled", took);
    Measurements.record(FORGED + " forged cancels: database checks", checks);
    Measurements.record(FORGED + " forged cancels: WARNING lines", forgedLines.size());
    assertThat(forgedLines).as("WARNING lines about forged cancels").hasSizeLessThanOrEqualTo(3);
    assertThat(forgedLines).allSatisfy(w -> assertThat(w).contains("job " + id + " attempt 1"));
    long bound = took.toMillis() / HeardCancels.GAP.toMillis() + 2;
    assertThat(checks)
        .as("cancel checks for %d forged NOTIFYs in %s", FORGED, took)
        .isLessThanOrEqualTo(bound);
    assertThat(db.job(id).state()).isEqualTo("cancelled");
    assertThat(runner.listenerState()).isEqualTo(ListenerState.DELIVERING);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.admin.HistoryPoint;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The per-minute history (V31, R__history.sql) on a real PostgreSQL: what a minute counts and its
 * percentiles, written once whoever rolls it up, caught up after a gap, pruned, bounded; and the
 * run time of jobs an engine really ran.
 */
class HistoryRollupTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_minute");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration WEEK = Duration.ofDays(7);

  private final HistoryStore history = new HistoryStore();

  /** The start of the current minute, read once per test: a slow test may cross into the next. */
  private Instant thisMinute;

  /** A minute {@code ago} minutes before {@link #thisMinute}, as SQL. */
  private String minute(int ago) {
    return "to_timestamp(" + thisMinute.minus(Duration.ofMinutes(ago)).getEpochSecond() + ")";
  }

  @BeforeEach
  void historyStartsTenMinutesAgo() {
    thisMinute =
        Instant.ofEpochSecond(
            db.queryLong("SELECT extract(epoch FROM date_trunc('minute', now()))::bigint"));
    fiveAgo = minute(5);
    markAt(minute(10));
  }

  private static void markAt(String sql) {
    db.update("UPDATE pgbus.queue_minute_mark SET rolled_to = " + sql);
  }

  /**
   * A finished job: finalized {@code ago} before the start of this minute's fifth-last minute plus
   * some seconds, with the given wait and run in milliseconds.
   */
  private static void finished(String queue, String state, String minute, long waitMs, long runMs) {
    db.update(
        """
        INSERT INTO pgbus.job (queue, state, payload, attempt, max_attempts, run_at, attempted_at,
                               finalized_at)
        SELECT ?, ?::pgbus.job_state, '{}', 1, 1,
               f - (? + ?) * interval '1 millisecond', f - ? * interval '1 millisecond', f
          FROM (SELECT %s + interval '20 seconds' AS f) t
        """
            .formatted(minute),
        queue,
        state,
        waitMs,
        runMs,
        runMs);
  }

  private String fiveAgo;

  private long rollup() throws SQLException {
    try (Connection c = db.connect()) {
      return history.rollup(c, WEEK);
    }
  }

  private long minuteRow(String queue, String column) {
    return db.queryLong(
        "SELECT " + column + " FROM pgbus.queue_minute WHERE queue = ? AND minute = " + fiveAgo,
        queue);
  }

  @Test
  void aMinuteCountsItsJobsAndTakesThePercentilesOfKnownDurations() throws SQLException {
    for (int i = 1; i <= 100; i++) {
      finished("mail", "completed", fiveAgo, i, i * 10L);
    }
    finished("sms", "dead", fiveAgo, 0, 5);
    finished("sms", "dead", fiveAgo, 0, 5);
    // A retryable job that failed twice in the minute (once before, outside the history).
    db.update(
        """
        INSERT INTO pgbus.job (queue, state, payload, attempt, run_at, errors)
        VALUES ('sms', 'retryable', '{}', 3, now() + interval '1 hour',
                jsonb_build_array(
                  jsonb_build_object('attempt', 3, 'at', %1$s + interval '50 seconds', 'error', 'x'),
                  jsonb_build_object('attempt', 2, 'at', %1$s + interval '1 second', 'error', 'x'),
                  jsonb_build_object('attempt', 1, 'at', now() - interval '1 day', 'error', 'x')))
        """
            .formatted(fiveAgo));

    assertThat(rollup()).isEqualTo(2);

    assertThat(minuteRow("mail", "completed")).isEqualTo(100);
    assertThat(minuteRow("mail", "failed")).isZero();
    // percentile_disc over 1..100 ms and 10..1000 ms: values that occurred.
    assertThat(minuteRow("mail", "wait_p50_ms")).isEqualTo(50);
    assertThat(minuteRow("mail", "wait_p95_ms")).isEqualTo(95);
    assertThat(minuteRow("mail", "wait_p99_ms")).isEqualTo(99);
    assertThat(minuteRow("mail", "run_p50_ms")).isEqualTo(500);
    assertThat(minuteRow("mail", "run_p95_ms")).isEqualTo(950);
    assertThat(minuteRow("mail", "run_p99_ms")).isEqualTo(990);
    assertThat(minuteRow("sms", "dead")).isEqualTo(2);
    assertThat(minuteRow("sms", "failed")).isEqualTo(2);
    assertThat(minuteRow("sms", "completed")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_minute")).isEqualTo(2);
  }

  @Test
  void retryableFailuresAreCountedInEveryQueueBesideItsWaitingJobs() throws SQLException {
    // The retryable arm visits each queue's range of job_queue_state_idx, found by a skip scan:
    // queues on either side of one another, with waiting jobs around them, each count their own.
    db.update(
        """
        INSERT INTO pgbus.job (queue, state, payload, attempt, run_at, errors)
        SELECT q, 'retryable', '{}', 2, now() + interval '1 minute',
               jsonb_build_array(jsonb_build_object('attempt', 1, 'at', %s + interval '9 seconds',
                                                    'error', 'x'))
          FROM unnest(ARRAY['a_first', 'm_middle', 'z_last']) q, generate_series(1, 3)
        """
            .formatted(fiveAgo));
    db.update(
        """
        INSERT INTO pgbus.job (queue, payload)
        SELECT q, '{}' FROM unnest(ARRAY['a_first', 'b_idle', 'y_idle', 'z_last']) q,
                            generate_series(1, 50)
        """);

    assertThat(rollup()).isEqualTo(3);

    assertThat(minuteRow("a_first", "failed")).isEqualTo(3);
    assertThat(minuteRow("m_middle", "failed")).isEqualTo(3);
    assertThat(minuteRow("z_last", "failed")).isEqualTo(3);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_minute")).isEqualTo(3);
  }

  @Test
  void theHistoryReadFillsEmptyStepsAndTakesTheWorstMinuteOfALongerStep() throws SQLException {
    finished("mail", "completed", fiveAgo, 10, 100);
    finished("mail", "completed", minute(4), 30, 300);
    finished("sms", "completed", fiveAgo, 20, 200);
    rollup();
    Instant now = Instant.now();
    Instant hourAgo = now.minus(Duration.ofHours(1));
    List<HistoryPoint> perMinute;
    List<HistoryPoint> hourly;
    List<HistoryPoint> allQueues;
    try (Connection c = db.connect()) {
      perMinute = history.history(c, "mail", hourAgo, now, 1);
      hourly = history.history(c, "mail", now.minus(Duration.ofDays(1)), now, 60);
      allQueues = history.history(c, null, hourAgo, now, 1);
    }
    assertThat(perMinute).hasSizeBetween(60, 61);
    assertThat(perMinute).extracting(HistoryPoint::completed).containsOnly(0L, 1L);
    assertThat(perMinute.stream().mapToLong(HistoryPoint::completed).sum()).isEqualTo(2);
    assertThat(perMinute.stream().filter(p -> p.runTime() == null).count())
        .isEqualTo(perMinute.size() - 2);
    assertThat(
            hourly.stream()
                .filter(p -> p.completed() > 0)
                .mapToLong(p -> p.runTime().p99Ms())
                .max())
        .hasValue(300);
    assertThat(allQueues.stream().mapToLong(HistoryPoint::completed).sum()).isEqualTo(3);
    Instant five = thisMinute.minus(Duration.ofMinutes(5));
    HistoryPoint fiveAgo =
        allQueues.stream().filter(p -> p.at().equals(five)).findFirst().orElseThrow();
    assertThat(fiveAgo.completed()).isEqualTo(2);
    assertThat(fiveAgo.waitTime().p50Ms()).isEqualTo(20); // the worse queue's minute
  }

  @Test
  void aMinuteIsWrittenOnceWhenTwoLeadersRollUpAtOnce() throws Exception {
    finished("mail", "completed", fiveAgo, 1, 1);
    long written;
    CompletableFuture<Long> second;
    try (Connection first = db.connect()) {
      first.setAutoCommit(false);
      written = history.rollup(first, WEEK);
      // The other leader waits on the mark's row lock ...
      second = CompletableFuture.supplyAsync(this::rollupUnchecked);
      Thread.sleep(300);
      assertThat(second).isNotDone();
      first.commit();
    }
    // ... and then finds the minutes written.
    assertThat(second.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(written).isEqualTo(1);
    assertThat(minuteRow("mail", "completed")).isEqualTo(1);

    // A job that lands in a written minute later (past the grace) does not change it.
    finished("mail", "completed", fiveAgo, 1, 1);
    assertThat(rollup()).isZero();
    assertThat(minuteRow("mail", "completed")).isEqualTo(1);
  }

  private long rollupUnchecked() {
    try {
      return rollup();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aLeaderAfterAGapWritesEveryMinuteItMissedButNoneBeforeTheRetention() throws SQLException {
    markAt("date_trunc('minute', now()) - interval '10 days'");
    finished("mail", "completed", "date_trunc('minute', now()) - interval '8 days'", 1, 1);
    finished("mail", "completed", "date_trunc('minute', now()) - interval '3 days'", 1, 1);
    finished("mail", "completed", "date_trunc('minute', now()) - interval '3 hours'", 1, 1);
    finished("mail", "completed", fiveAgo, 1, 1);
    // Not yet: a minute that has not ended.
    finished("mail", "completed", minute(-1), 1, 1);

    assertThat(rollup()).isEqualTo(3);

    assertThat(db.queryLongs("SELECT completed FROM pgbus.queue_minute ORDER BY minute"))
        .containsExactly(1L, 1L, 1L);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.queue_minute_mark"
                    + " WHERE rolled_to >= "
                    + minute(1)
                    + " AND rolled_to <= date_trunc('minute', now())"))
        .isEqualTo(1);
  }

  @Test
  void minutesOlderThanTheRetentionAreDeleted() throws SQLException {
    db.update(
        """
        INSERT INTO pgbus.queue_minute (queue, minute, completed, failed, dead)
        VALUES ('mail', date_trunc('minute', now() - interval '8 days'), 1, 0, 0),
               ('mail', date_trunc('minute', now() - interval '6 days'), 1, 0, 0)
        """);
    assertThat(rollup()).isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_minute")).isEqualTo(1);
    try (Connection c = db.connect()) {
      assertThat(history.rollup(c, Duration.ofHours(1))).isEqualTo(1);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_minute")).isZero();
  }

  @Test
  void anIdleRollupWritesNothingAndSaysSo() throws SQLException {
    assertThat(rollup()).isZero();
    assertThat(rollup()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_minute")).isZero();
  }

  @Test
  void theRunTimeOfAJobAnEngineRanIsTheHandlersTime() throws SQLException {
    markAt(minute(0));
    engines.start(
        engines.config().capsule(new CapsuleConfig("h", List.of("timed"), 1)).build(),
        (job, tx) -> {
          // A handler that writes first: its transaction (and its now()) starts here.
          try (var st = tx.createStatement()) {
            st.execute("SELECT 1");
          }
          Thread.sleep(400);
          return Outcome.complete();
        });
    long id = JobFixtures.in(db).enqueue("timed");
    Await.until(
        "the job to complete",
        Duration.ofSeconds(20),
        () -> db.job(id).state(),
        s -> s.equals("completed"));
    // finalized_at - attempted_at: the claim to the end of the handler's transaction.
    long runMs =
        db.queryLong(
            "SELECT (extract(epoch FROM finalized_at - attempted_at) * 1000)::bigint"
                + " FROM pgbus.job WHERE id = ?",
            id);
    assertThat(runMs).isBetween(400L, 10_000L);
  }

  @Test
  void boundsAreRefusedNamingTheFieldOnTheJavaAndTheSqlPath() throws SQLException {
    Instant now = Instant.now();
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> history.history(c, "mail", now, now.minusSeconds(60), 1))
          .isInstanceOf(InvalidFilterException.class)
          .hasMessageContaining("invalid to");
      assertThatThrownBy(() -> history.history(c, "mail", now.minus(Duration.ofDays(32)), now, 60))
          .hasMessageContaining("invalid from")
          .hasMessageContaining("at most 31 days");
      assertThatThrownBy(() -> history.history(c, "mail", now.minusSeconds(3600), now, 0))
          .hasMessageContaining("invalid step '0'");
      assertThatThrownBy(() -> history.history(c, "mail", now.minusSeconds(3600), now, 1441))
          .hasMessageContaining("invalid step '1441'");
      assertThatThrownBy(() -> history.history(c, "mail", now.minus(Duration.ofDays(7)), now, 1))
          .hasMessageContaining("invalid step '1'")
          .hasMessageContaining("use at least 8 minutes");
      assertThatThrownBy(() -> history.history(c, "no such queue!", now.minusSeconds(60), now, 1))
          .hasMessageContaining("invalid queue");
      assertThatThrownBy(() -> history.rollup(c, Duration.ofMinutes(30)))
          .hasMessageContaining("invalid history retention")
          .hasMessageContaining("pgbus.history.retention");
    }
    assertThatThrownBy(
            () ->
                EngineConfig.builder()
                    .set(MaintainerConfig.HISTORY_RETENTION, Duration.ofDays(40))
                    .build())
        .hasMessageContaining("pgbus.history.retention");
    assertThat(EngineConfig.builder().build().maintainer().historyRetention()).isEqualTo(WEEK);
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.admin.QueueStats;
import io.pgbus.admin.Throughput;
import io.pgbus.engine.JobAdminStore.Action;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator's SQL behind JobAdmin on a real PostgreSQL: keyset search, one job, the four bulk
 * actions checked in pgbus.job and pgbus.audit, queue counts, throughput and the bounds.
 */
class JobAdminTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private final JobAdminStore admin = new JobAdminStore();

  @BeforeEach
  void clean() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.job_history");
    db.update("DELETE FROM pgbus.queue_pause");
    db.update("DELETE FROM pgbus.audit");
  }

  private long job(String queue, String state, String payload) {
    return job(queue, state, payload, null);
  }

  private long job(String queue, String state, String payload, String uniqueKey) {
    return db.queryLong(
        """
        INSERT INTO pgbus.job (queue, state, payload, unique_key, attempt, max_attempts, run_at,
                               finalized_at, errors)
        VALUES (?, ?::pgbus.job_state, ?::jsonb, ?, 1, 1,
                CASE WHEN ? = 'scheduled' THEN now() + interval '1 hour' ELSE now() END,
                CASE WHEN ? IN ('completed', 'dead', 'cancelled') THEN now() END,
                CASE WHEN ? = 'dead' THEN '[{"attempt":1,"error":"boom"}]'::jsonb ELSE '[]' END)
        RETURNING id
        """,
        queue,
        state,
        payload,
        uniqueKey,
        state,
        state,
        state);
  }

  private String state(long id) throws SQLException {
    try (Connection c = db.connect();
        var ps = c.prepareStatement("SELECT state::text FROM pgbus.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (var rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  @Test
  void searchPagesNewestFirstWithAKeysetUntilTheLastPage() throws SQLException {
    var ids = new ArrayList<Long>();
    for (int i = 0; i < 25; i++) {
      ids.add(job("mail", i % 2 == 0 ? "dead" : "completed", "{\"n\":" + i + "}"));
    }
    job("other", "dead", "{}");
    var seen = new ArrayList<Long>();
    Long before = null;
    int pages = 0;
    try (Connection c = db.connect()) {
      do {
        JobPage page = admin.jobSearch(c, JobFilter.all().withQueue("mail"), before, 10);
        page.jobs().forEach(j -> seen.add(j.id()));
        before = page.next();
        pages++;
      } while (before != null);
    }
    assertThat(pages).isEqualTo(3);
    java.util.Collections.reverse(ids);
    assertThat(seen).isEqualTo(ids);
  }

  @Test
  void searchFiltersByStateUniqueKeyPayloadAndTime() throws SQLException {
    long dead42 = job("mail", "dead", "{\"order\":42,\"to\":\"a\"}", "k-42");
    job("mail", "dead", "{\"order\":43}");
    job("mail", "completed", "{\"order\":42}");
    try (Connection c = db.connect()) {
      assertThat(ids(c, JobFilter.all().withStates(JobState.DEAD))).hasSize(2);
      assertThat(
              ids(
                  c,
                  JobFilter.all()
                      .withStates(JobState.DEAD)
                      .withPayloadContaining("{\"order\":42}")))
          .containsExactly(dead42);
      assertThat(ids(c, JobFilter.all().withUniqueKey("k-42"))).containsExactly(dead42);
      assertThat(ids(c, JobFilter.byId(dead42))).containsExactly(dead42);
      Instant future = Instant.now().plusSeconds(3600);
      assertThat(ids(c, JobFilter.all().withCreated(future, null))).isEmpty();
      assertThat(ids(c, JobFilter.all().withCreated(null, future))).hasSize(3);
    }
  }

  private List<Long> ids(Connection c, JobFilter f) throws SQLException {
    return admin.jobSearch(c, f, null, JobAdmin.MAX_PAGE).jobs().stream().map(JobView::id).toList();
  }

  @Test
  void aSearchForARareStateReadsAboutAPageOfRowsNotEveryJob() throws SQLException {
    db.update(
        "INSERT INTO pgbus.job (queue, state, payload, finalized_at)"
            + " SELECT 'q' || (i % 4), 'completed', '{}', now() FROM generate_series(1, 50000) i");
    for (int i = 0; i < 3; i++) {
      job("q" + i, "running", "{}");
    }
    db.update("VACUUM ANALYZE pgbus.job");
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      long before = rowsRead(c);
      JobPage page = admin.jobSearch(c, JobFilter.all().withStates(JobState.RUNNING), null, 50);
      long read = rowsRead(c) - before;
      assertThat(page.jobs()).hasSize(3);
      assertThat(read).as("rows of pgbus.job read for a page of 3").isLessThan(100);

      // The measure works: a payload filter on completed jobs (no index for it) reads them all,
      // as docs/admin-api.md says.
      before = rowsRead(c);
      admin.jobSearch(
          c,
          JobFilter.all().withStates(JobState.COMPLETED).withPayloadContaining("{\"x\":1}"),
          null,
          50);
      assertThat(rowsRead(c) - before).isGreaterThan(10_000);
    }
  }

  /** Rows of pgbus.job this transaction has read from the table (sequentially or by index). */
  private static long rowsRead(Connection c) throws SQLException {
    try (var ps =
            c.prepareStatement(
                "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
                    + " FROM pg_stat_xact_user_tables WHERE relid = 'pgbus.job'::regclass::oid");
        var rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void oneJobCarriesItsPayloadErrorsAndLastError() throws SQLException {
    long id = job("mail", "dead", "{\"to\":\"ada\"}", "u-1");
    try (Connection c = db.connect()) {
      JobView v = admin.jobView(c, id).orElseThrow();
      assertThat(v.state()).isEqualTo(JobState.DEAD);
      assertThat(v.payload()).isEqualTo("{\"to\": \"ada\"}");
      assertThat(v.errors()).contains("boom");
      assertThat(v.lastError()).isEqualTo("boom");
      assertThat(v.uniqueKey()).isEqualTo("u-1");
      assertThat(v.maxAttempts()).isEqualTo(1);
      assertThat(admin.jobView(c, id + 1000)).isEmpty();
      assertThat(admin.jobSearch(c, JobFilter.byId(id), null, 1).jobs().get(0).payload()).isNull();
    }
  }

  @Test
  void aSelectionOfIdsIsSearchedAndActedOnAsOneBulkActionAndNothingElse() throws SQLException {
    long a = job("mail", "dead", "{}");
    long b = job("mail", "dead", "{}");
    long notSelected = job("mail", "dead", "{}");
    long finished = job("mail", "completed", "{}");
    JobFilter selection = JobFilter.all().withIds(List.of(a, b, finished));
    try (Connection c = db.connect()) {
      assertThat(ids(c, selection)).containsExactly(finished, b, a);
      // The states of the action still decide: a replay of the selection leaves the completed job.
      assertThat(admin.jobAct(c, Action.REPLAY, selection, 100, "ops")).isEqualTo(2);
    }
    assertThat(state(a)).isEqualTo("available");
    assertThat(state(b)).isEqualTo("available");
    assertThat(state(notSelected)).isEqualTo("dead");
    assertThat(state(finished)).isEqualTo("completed");
    assertThatThrownBy(() -> JobFilter.all().withIds(List.of()))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("ids");
    var tooMany =
        java.util.stream.LongStream.rangeClosed(1, JobFilter.MAX_IDS + 1).boxed().toList();
    assertThatThrownBy(() -> JobFilter.all().withIds(tooMany))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("give 1 to " + JobFilter.MAX_IDS);
  }

  @Test
  void anErrorSearchFindsJobsByTheirLatestErrorIgnoringCaseWithinTheWindow() throws SQLException {
    long timeout = job("mail", "dead", "{}");
    db.update(
        "UPDATE pgbus.job SET errors = '[{\"attempt\":1,\"error\":\"java.net.SocketTimeoutException: Read timed out\"}]' WHERE id = "
            + timeout);
    long boom = job("mail", "dead", "{}");
    long old = job("mail", "dead", "{}");
    db.update(
        "UPDATE pgbus.job SET created_at = now() - interval '30 days',"
            + " errors = '[{\"attempt\":1,\"error\":\"read TIMED out\"}]' WHERE id = "
            + old);
    try (Connection c = db.connect()) {
      assertThat(ids(c, JobFilter.all().withErrorContaining("timed OUT"))).containsExactly(timeout);
      assertThat(ids(c, JobFilter.all().withErrorContaining("boom"))).containsExactly(boom);
      assertThat(
              ids(
                  c,
                  JobFilter.all()
                      .withErrorContaining("timed out")
                      .withCreated(
                          Instant.now().minus(java.time.Duration.ofDays(31)).plusSeconds(60),
                          null)))
          .containsExactly(old, timeout);
    }
    assertThatThrownBy(() -> JobFilter.all().withErrorContaining("ab"))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("error");
  }

  @Test
  void replayDeadRevivesOnlyDeadJobsAndAuditsEach() throws SQLException {
    long a = job("mail", "dead", "{}");
    long b = job("mail", "dead", "{}");
    long done = job("mail", "completed", "{}");
    try (Connection c = db.connect()) {
      int n = admin.jobAct(c, Action.REPLAY, JobFilter.all().withQueue("mail"), 100, "ops");
      assertThat(n).isEqualTo(2);
    }
    assertThat(state(a)).isEqualTo("available");
    assertThat(state(b)).isEqualTo("available");
    assertThat(state(done)).isEqualTo("completed");
    assertThat(db.queryLong("SELECT max_attempts FROM pgbus.job WHERE id = ?", a)).isEqualTo(2);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'replay' AND actor = 'ops'"))
        .isEqualTo(2);
  }

  @Test
  void bulkReplayRevivesOneDeadJobPerUniqueKeyAndNoneWhoseKeyIsTaken() throws SQLException {
    long older = job("mail", "dead", "{}", "k");
    long newer = job("mail", "dead", "{}", "k");
    long taken = job("mail", "dead", "{}", "t");
    job("mail", "available", "{}", "t");
    try (Connection c = db.connect()) {
      assertThat(admin.jobAct(c, Action.REPLAY, JobFilter.all(), 100, null)).isEqualTo(1);
    }
    assertThat(state(newer)).isEqualTo("available");
    assertThat(state(older)).isEqualTo("dead");
    assertThat(state(taken)).isEqualTo("dead");
  }

  @Test
  void retryNowMakesScheduledAndRetryableJobsAvailable() throws SQLException {
    long s = job("mail", "scheduled", "{}");
    long r = job("mail", "retryable", "{}");
    long running = job("mail", "running", "{}");
    try (Connection c = db.connect()) {
      assertThat(admin.jobAct(c, Action.RETRY, JobFilter.all(), 100, "ops")).isEqualTo(2);
    }
    assertThat(state(s)).isEqualTo("available");
    assertThat(state(r)).isEqualTo("available");
    assertThat(state(running)).isEqualTo("running");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE id = ? AND run_at <= now()", s))
        .isEqualTo(1);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE action = 'retry'"))
        .isEqualTo(2);
  }

  @Test
  void cancelWaitingCancelsOneJobByIdAndLeavesRunningOnes() throws SQLException {
    long waiting = job("mail", "available", "{}");
    long other = job("mail", "available", "{}");
    long running = job("mail", "running", "{}");
    try (Connection c = db.connect()) {
      assertThat(admin.jobAct(c, Action.CANCEL, JobFilter.byId(waiting), 1, "ops")).isEqualTo(1);
      assertThat(admin.jobAct(c, Action.CANCEL, JobFilter.byId(running), 1, "ops")).isEqualTo(0);
    }
    assertThat(state(waiting)).isEqualTo("cancelled");
    assertThat(state(other)).isEqualTo("available");
    assertThat(state(running)).isEqualTo("running");
    assertThat(db.queryLong("SELECT job_id FROM pgbus.audit WHERE action = 'cancel'"))
        .isEqualTo(waiting);
  }

  @Test
  void deleteFinishedDeletesOnlyFinishedJobsUpToTheLimit() throws SQLException {
    for (int i = 0; i < 5; i++) {
      job("mail", "completed", "{}");
    }
    long waiting = job("mail", "available", "{}");
    try (Connection c = db.connect()) {
      assertThat(admin.jobAct(c, Action.DELETE, JobFilter.all(), 3, "ops")).isEqualTo(3);
      assertThat(admin.jobAct(c, Action.DELETE, JobFilter.all(), 3, "ops")).isEqualTo(2);
      assertThat(admin.jobAct(c, Action.DELETE, JobFilter.all(), 3, "ops")).isEqualTo(0);
    }
    assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(waiting);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE action = 'delete'"))
        .isEqualTo(5);
  }

  @Test
  void anActionRolledBackWithTheCallersTransactionLeavesNothing() throws SQLException {
    long dead = job("mail", "dead", "{}");
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThat(admin.jobAct(c, Action.REPLAY, JobFilter.byId(dead), 1, "ops")).isEqualTo(1);
      c.rollback();
    }
    assertThat(state(dead)).isEqualTo("dead");
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit")).isZero();
  }

  @Test
  void queueStatsCountPerStateWithOldestWaitAndPause() throws SQLException {
    for (int i = 0; i < 4; i++) {
      job("mail", "completed", "{}");
    }
    job("mail", "available", "{}");
    job("sms", "dead", "{}");
    db.update("INSERT INTO pgbus.queue_pause (queue) VALUES ('sms')");
    db.update(
        "UPDATE pgbus.job SET run_at = now() - interval '90 seconds' WHERE state = 'available'");
    db.update("ANALYZE pgbus.job");
    List<QueueStats> stats;
    try (Connection c = db.connect()) {
      stats = admin.queueStats(c, List.of("idle"), JobAdmin.COUNT_CAP);
    }
    assertThat(stats).extracting(QueueStats::queue).containsExactly("idle", "mail", "sms");
    QueueStats mail = stats.get(1);
    // The cap and the estimates past it: QueueCountsTest.
    assertThat(mail.counts().get(JobState.COMPLETED)).isEqualTo(4);
    assertThat(mail.capped()).isEmpty();
    assertThat(mail.estimated()).isEmpty();
    assertThat(mail.counts().get(JobState.AVAILABLE)).isEqualTo(1);
    assertThat(mail.oldestWaiting().toSeconds()).isBetween(89L, 120L);
    assertThat(mail.paused()).isFalse();
    assertThat(stats.get(2).paused()).isTrue();
    assertThat(stats.get(2).counts().get(JobState.DEAD)).isEqualTo(1);
    assertThat(stats.get(0).counts().get(JobState.AVAILABLE)).isZero();
  }

  @Test
  void throughputCountsFinishedJobsPerQueueAndMinuteOfTheLastHour() throws SQLException {
    job("mail", "completed", "{}");
    job("mail", "completed", "{}");
    job("mail", "dead", "{}");
    long old = job("mail", "completed", "{}");
    db.update("UPDATE pgbus.job SET finalized_at = now() - interval '2 hours' WHERE id = ?", old);
    List<Throughput> points;
    try (Connection c = db.connect()) {
      points = admin.throughput(c);
    }
    assertThat(points.stream().mapToLong(Throughput::completed).sum()).isEqualTo(2);
    assertThat(points.stream().mapToLong(Throughput::dead).sum()).isEqualTo(1);
    assertThat(points).allMatch(p -> p.queue().equals("mail"));
  }

  @Test
  void boundsAreRefusedNamingTheField() throws SQLException {
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> admin.jobSearch(c, JobFilter.all(), null, JobAdmin.MAX_PAGE + 1))
          .isInstanceOf(InvalidFilterException.class)
          .hasMessageContaining("limit '201'")
          .extracting(e -> ((InvalidFilterException) e).field())
          .isEqualTo("limit");
      assertThatThrownBy(
              () -> admin.jobAct(c, Action.DELETE, JobFilter.all(), JobAdmin.MAX_BULK + 1, null))
          .hasMessageContaining("limit '10001'");
      assertThatThrownBy(() -> admin.jobSearch(c, JobFilter.all(), 0L, 10))
          .hasMessageContaining("before");
    }
    assertThatThrownBy(() -> JobState.parse("deadish")).hasMessageContaining("state 'deadish'");
    assertThatThrownBy(() -> JobFilter.all().withQueue("Bad-Queue"))
        .hasMessageContaining("queue 'Bad-Queue'");
    assertThatThrownBy(() -> JobFilter.all().withPayloadContaining("x".repeat(1001)))
        .hasMessageContaining("payload")
        .hasMessageContaining("1000 characters");
    assertThatThrownBy(() -> JobFilter.all().withPayloadContaining("[1]"))
        .hasMessageContaining("JSON object");
    assertThatThrownBy(() -> JobFilter.all().withUniqueKey("k".repeat(256)))
        .hasMessageContaining("uniqueKey");
    assertThatThrownBy(() -> JobFilter.byId(0)).hasMessageContaining("id '0'");
    assertThatThrownBy(() -> JobFilter.all().withStates(Set.of())).hasMessageContaining("state");
  }

  @Test
  void aPayloadFilterThatIsNotJsonFailsInTheDatabaseWithItsSqlState() throws SQLException {
    try (Connection c = db.connect()) {
      assertThatThrownBy(
              () -> admin.jobSearch(c, JobFilter.all().withPayloadContaining("{nope"), null, 10))
          .isInstanceOf(SQLException.class)
          .extracting(e -> ((SQLException) e).getSQLState())
          .isEqualTo("22P02");
    }
  }

  // Issue #23: a payload search that matches nothing scanned every job (40 at once slowed an
  // enqueue to 4.3 s over a million jobs).

  @Test
  void aPayloadSearchWithoutACreationWindowLooksAtTheLastSevenDaysOnly() throws SQLException {
    long old = job("mail", "dead", "{\"pin\":\"0417\"}");
    long recent = job("mail", "dead", "{\"pin\":\"0417\"}");
    db.update("UPDATE pgbus.job SET created_at = now() - interval '8 days' WHERE id = ?", old);
    JobFilter pin = JobFilter.all().withPayloadContaining("{\"pin\":\"0417\"}");
    try (Connection c = db.connect()) {
      assertThat(ids(c, pin)).containsExactly(recent);
      assertThat(ids(c, pin.withStates(JobState.DEAD))).containsExactly(recent);
      Instant nineDaysAgo = Instant.now().minus(java.time.Duration.ofDays(9));
      assertThat(ids(c, pin.withCreated(nineDaysAgo, null))).containsExactly(recent, old);
      // The window ends at createdTo when given.
      assertThat(ids(c, pin.withCreated(null, Instant.now().minus(java.time.Duration.ofDays(7)))))
          .containsExactly(old);
    }
  }

  @Test
  void aPayloadSearchOverMoreThan31DaysIsRefusedNamingTheWindow() throws SQLException {
    JobFilter pin = JobFilter.all().withPayloadContaining("{\"pin\":\"0417\"}");
    Instant from = Instant.parse("2026-01-01T00:00:00Z");
    try (Connection c = db.connect()) {
      assertThatThrownBy(
              () -> ids(c, pin.withCreated(from, from.plus(java.time.Duration.ofDays(32)))))
          .isInstanceOf(InvalidFilterException.class)
          .hasMessageContaining("createdFrom '2026-01-01T00:00:00Z'")
          .hasMessageContaining("at most 31 days");
      assertThat(ids(c, pin.withCreated(from, from.plus(java.time.Duration.ofDays(31))))).isEmpty();
      // Without a payload filter no window is imposed.
      assertThat(ids(c, JobFilter.all().withCreated(from, null))).isEmpty();
    }
  }

  @Test
  void aSearchPastItsTimeoutIsCancelledAsASearchTimeoutAndTheSessionKeepsItsOwnTimeout()
      throws SQLException {
    db.update(
        "INSERT INTO pgbus.job (queue, state, payload, finalized_at)"
            + " SELECT 'q' || (i % 4), 'completed', '{}', now() FROM generate_series(1, 50000) i");
    JobAdminStore impatient = new JobAdminStore(1);
    JobFilter nothing =
        JobFilter.all().withStates(JobState.COMPLETED).withPayloadContaining("{\"x\":1}");
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> impatient.jobSearch(c, nothing, null, 50))
          .isInstanceOf(io.pgbus.admin.SearchTimeoutException.class)
          .hasMessageContaining("1 ms")
          .hasMessageContaining("narrow it");
      assertThat(setting(c)).isEqualTo("0");
      // The documented timeout lets it finish; a stricter session timeout stays in force.
      assertThat(admin.jobSearch(c, nothing, null, 50).jobs()).isEmpty();
      assertThat(setting(c)).isEqualTo("0");
      c.createStatement().execute("SET statement_timeout = '2s'");
      admin.jobSearch(c, nothing, null, 50);
      assertThat(setting(c)).isEqualTo("2s");
      // In a transaction: the failed search aborts it, and its rollback restores the setting.
      c.createStatement().execute("SET statement_timeout = 0");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> impatient.jobSearch(c, nothing, null, 50))
          .isInstanceOf(io.pgbus.admin.SearchTimeoutException.class);
      c.rollback();
      assertThat(setting(c)).isEqualTo("0");
    }
  }

  private static String setting(Connection c) throws SQLException {
    try (var rs = c.createStatement().executeQuery("SHOW statement_timeout")) {
      rs.next();
      return rs.getString(1);
    }
  }
}

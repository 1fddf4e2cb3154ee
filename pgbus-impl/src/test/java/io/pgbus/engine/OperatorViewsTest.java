package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the console's issue #29 views read and write, on a real PostgreSQL: a search and a bulk
 * action by a handler's queues, a live limit change audited with the limits before and after, and a
 * batch and a job's dependency edges.
 */
class OperatorViewsTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private final JobAdminStore admin = new JobAdminStore();
  private final QueueLimits limits = new QueueLimits();

  @BeforeEach
  void clean() {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.job_dependency");
    db.update("DELETE FROM pgbus.batch");
    db.update("DELETE FROM pgbus.queue_limit");
    db.update("DELETE FROM pgbus.audit");
  }

  private long job(String queue, String state) {
    return db.queryLong(
        """
        INSERT INTO pgbus.job (queue, state, payload, finalized_at)
        VALUES (?, ?::pgbus.job_state, '{}',
                CASE WHEN ? IN ('completed', 'dead', 'cancelled') THEN now() END)
        RETURNING id
        """,
        queue,
        state,
        state);
  }

  private List<Long> ids(JobFilter filter) throws SQLException {
    try (Connection c = db.connect()) {
      return admin.jobSearch(c, filter, null, 50).jobs().stream().map(JobView::id).toList();
    }
  }

  @Test
  void aSearchByAHandlersQueuesFindsTheirJobsOnly() throws SQLException {
    long a = job("orders", "dead");
    long b = job("refunds", "available");
    long b2 = job("refunds", "dead");
    job("mail", "dead");
    job("mail", "available");

    JobFilter handler = JobFilter.all().withQueues(List.of("orders", "refunds"));
    assertThat(ids(handler)).containsExactly(b2, b, a);
    assertThat(ids(handler.withStates(JobState.DEAD))).containsExactly(b2, a);
    assertThat(ids(handler.withQueue("refunds"))).containsExactly(b2, b);
    assertThat(ids(handler.withQueue("mail"))).isEmpty();
    assertThat(ids(handler.withId(a))).containsExactly(a);

    try (Connection c = db.connect()) {
      assertThat(admin.jobAct(c, JobAdminStore.Action.DELETE, handler, 100, "ops")).isEqualTo(2);
    }
    assertThat(db.jobCount("mail", "dead")).isEqualTo(1);
    assertThat(db.jobCount("orders", "dead")).isZero();
  }

  @Test
  void aQueueListIsBoundedAndChecked() {
    assertThatThrownBy(() -> JobFilter.all().withQueues(List.of()))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("give 1 to 100 queue names");
    assertThatThrownBy(() -> JobFilter.all().withQueues(Collections.nCopies(101, "q")))
        .isInstanceOf(InvalidFilterException.class);
    assertThatThrownBy(() -> JobFilter.all().withQueues(List.of("Bad-Name")))
        .isInstanceOf(InvalidFilterException.class)
        .hasMessageContaining("Bad-Name");
  }

  @Test
  void aLiveLimitChangeIsAuditedWithTheLimitsBeforeAndAfter() throws SQLException {
    try (Connection c = db.connect()) {
      QueueLimits.Change set =
          limits.change(c, new QueueLimit("partner", 5, null, 100, Duration.ofMinutes(1)), "jane");
      assertThat(set.before()).isNull();
      assertThat(set.after().globalConcurrency()).isEqualTo(5);
      assertThat(set.after().rateWindow()).isEqualTo(Duration.ofMinutes(1));

      QueueLimits.Change raise = limits.change(c, new QueueLimit("partner", 8, null), "joe");
      assertThat(raise.before()).isEqualTo(set.after());
      assertThat(raise.after().globalConcurrency()).isEqualTo(8);
      assertThat(raise.after().rateLimit()).isNull();

      // The same limits again change nothing, and write no audit row.
      assertThat(limits.change(c, new QueueLimit("partner", 8, null), "joe").changed()).isFalse();

      QueueLimits.Change clear =
          limits.change(c, new QueueLimit("partner", null, null, null, null), "jane");
      assertThat(clear.after()).isNull();
      assertThat(limits.read(c, "partner")).isNull();

      List<QueueLimits.Entry> history = limits.history(c, "partner", 10);
      assertThat(history)
          .extracting(QueueLimits.Entry::actor)
          .containsExactly("jane", "joe", "jane");
      assertThat(history.get(1).detail())
          .contains("\"before\": {\"keyFifo\": false, \"rateLimit\": 100")
          .contains("\"after\": {\"keyFifo\": false, \"rateLimit\": null");
      assertThat(history.get(0).detail()).contains("\"after\": null");
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE action = 'limit'"))
        .isEqualTo(3);
  }

  @Test
  void aLimitTheSqlRefusesWritesNeitherTheLimitNorItsAudit() throws SQLException {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      // Past the Java checks (a record built by reflection would be the only way): the SQL's own.
      assertThatThrownBy(
              () ->
                  c.createStatement()
                      .execute("SELECT pgbus.queue_limit_set('partner', global_concurrency => 0)"))
          .isInstanceOf(SQLException.class)
          .hasMessageContaining("global concurrency 0 for queue partner is invalid");
      c.rollback();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_limit")).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit")).isZero();
  }

  @Test
  void aBatchListsItsMembersAndAJobItsParentsAndChildren() {
    long batch =
        db.queryLong(
            """
            INSERT INTO pgbus.batch (size, pending, completed, callback_queue, callback_payload)
            VALUES (3, 1, 2, 'reports', '{"report":7}') RETURNING id
            """);
    long m1 = job("orders", "completed");
    long m2 = job("orders", "completed");
    long m3 = job("orders", "running");
    db.update("UPDATE pgbus.job SET batch_id = ? WHERE id IN (?, ?, ?)", batch, m1, m2, m3);
    long child = job("ship", "scheduled");
    db.update(
        "INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state)"
            + " VALUES (?, ?, 'hold', 'completed'), (?, ?, 'cancel', 'waiting')",
        m1,
        child,
        m3,
        child);

    var links = new JobLinks(db.dataSource());
    JobLinks.Batch b = links.batch(batch, 0, 2);
    assertThat(b.size()).isEqualTo(3);
    assertThat(b.completed()).isEqualTo(2);
    assertThat(b.callbackPayload()).contains("\"report\": 7");
    assertThat(b.members()).extracting(JobLinks.Member::id).containsExactly(m1, m2);
    assertThat(b.next()).isEqualTo(m2);
    assertThat(links.batch(batch, b.next(), 2).members())
        .extracting(JobLinks.Member::id, JobLinks.Member::state)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(m3, "running"));
    assertThat(links.batch(batch + 1000, 0, 2)).isNull();

    JobLinks.Links ofChild = links.links(child);
    assertThat(ofChild.parents())
        .extracting(JobLinks.Edge::job, JobLinks.Edge::state, JobLinks.Edge::edge)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(m1, "completed", "completed"),
            org.assertj.core.groups.Tuple.tuple(m3, "running", "waiting"));
    assertThat(ofChild.children()).isEmpty();
    JobLinks.Links ofMember = links.links(m3);
    assertThat(ofMember.batchId()).isEqualTo(batch);
    assertThat(ofMember.children())
        .extracting(JobLinks.Edge::job, JobLinks.Edge::onFailure)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(child, "cancel"));
    assertThat(links.links(child + 1000)).isNull();
    assertThat(Set.of(m1, m2)).doesNotContain(child);
  }
}

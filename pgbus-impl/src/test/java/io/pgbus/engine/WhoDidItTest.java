package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Who did it (V7): a job records who enqueued it and its correlation id, and cancel, replay, pause
 * and resume leave an audit entry with the actor and the time, in the action's transaction.
 */
class WhoDidItTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause", "pgbus.audit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final Engine engine =
      Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();

  @Test
  void aJavaEnqueueRecordsThePrincipalAndTheCorrelationId() throws SQLException {
    long id;
    try (Connection c = db.connect()) {
      id =
          engine
              .jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "orders",
                      "{}",
                      EnqueueOptions.defaults().withCorrelationId("req-7"),
                      "alice"));
    }
    assertThat(text("SELECT enqueued_by FROM pgbus.job WHERE id = ?", id)).isEqualTo("alice");
    assertThat(text("SELECT correlation_id FROM pgbus.job WHERE id = ?", id)).isEqualTo("req-7");
  }

  @Test
  void aJavaEnqueueWithoutPrincipalRecordsTheDatabaseRoleAndNoCorrelationId() throws SQLException {
    long id;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      // An earlier enqueue of the same transaction set both; the next one must not inherit them.
      engine
          .jobs()
          .enqueue(
              c,
              new NewJob("orders", "{}", EnqueueOptions.defaults().withCorrelationId("x"), "bob"));
      id = engine.jobs().enqueue(c, NewJob.of("orders", "{}"));
      c.commit();
    }
    assertThat(text("SELECT enqueued_by FROM pgbus.job WHERE id = ?", id))
        .isEqualTo(text("SELECT session_user::text"));
    assertThat(text("SELECT correlation_id FROM pgbus.job WHERE id = ?", id)).isNull();
  }

  @Test
  void aBatchEnqueueRecordsThePrincipalOnEveryJob() throws SQLException {
    List<Long> ids;
    try (Connection c = db.connect()) {
      var options = EnqueueOptions.defaults().withCorrelationId("batch-1");
      ids =
          engine
              .jobs()
              .enqueueAll(
                  c,
                  List.of(
                      new NewJob("orders", "{}", options, "carol"),
                      new NewJob("orders", "{}", options, "carol")));
    }
    for (long id : ids) {
      assertThat(
              text("SELECT enqueued_by || '/' || correlation_id FROM pgbus.job WHERE id = ?", id))
          .isEqualTo("carol/batch-1");
    }
  }

  @Test
  void anSqlEnqueueRecordsTheSessionUserOrTheSettingsItSets() throws SQLException {
    long plain = db.queryLong("SELECT pgbus.enqueue('orders', '{}')");
    assertThat(text("SELECT enqueued_by FROM pgbus.job WHERE id = ?", plain))
        .isEqualTo(text("SELECT session_user::text"));
    long tagged;
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      c.createStatement().execute("SELECT set_config('pgbus.principal', 'batch-job', true)");
      c.createStatement().execute("SELECT set_config('pgbus.correlation_id', 'nightly', true)");
      try (ResultSet rs =
          c.createStatement().executeQuery("SELECT pgbus.enqueue('orders', '{}')")) {
        rs.next();
        tagged = rs.getLong(1);
      }
      c.commit();
    }
    assertThat(
            text("SELECT enqueued_by || '/' || correlation_id FROM pgbus.job WHERE id = ?", tagged))
        .isEqualTo("batch-job/nightly");
  }

  @Test
  void aJobEnqueuedByAHandlerInheritsTheHandledJobsCorrelationId() throws SQLException {
    var child = new AtomicReference<Long>();
    var running = new AtomicReference<Engine>();
    Engine e =
        engines.start(
            engines.config().capsule("main", 1, "parent").build(),
            (job, tx) -> {
              // The adapter that called the handler names it as the parent (HandledJob).
              child.set(
                  running.get().jobs().enqueue(tx, NewJob.of("child", "{}").withParent(job.id())));
              return null;
            });
    running.set(e);
    long parent;
    try (Connection c = db.connect()) {
      parent =
          e.jobs()
              .enqueue(
                  c,
                  new NewJob(
                      "parent", "{}", EnqueueOptions.defaults().withCorrelationId("order-42")));
    }
    // The child commits with the parent's completion.
    Await.until(
        "the handler's job committed",
        Duration.ofSeconds(10),
        () -> db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'child'") == 1);
    assertThat(text("SELECT correlation_id FROM pgbus.job WHERE id = ?", child.get()))
        .isEqualTo("order-42");
    assertThat(parent).isNotEqualTo(child.get());
  }

  @Test
  void cancelReplayPauseAndResumeRecordWhoDidThemAndWhen() throws SQLException {
    long cancelled = db.queryLong("SELECT pgbus.enqueue('audited', '{}')");
    long dead = db.queryLong("SELECT pgbus.enqueue('audited', '{}')");
    db.update("UPDATE pgbus.job SET state = 'dead', finalized_at = now() WHERE id = ?", dead);
    Instant before = Instant.now().minusSeconds(5);
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().cancel(c, cancelled, "alice")).isTrue();
      assertThat(engine.jobs().replay(c, dead, "bob")).isTrue();
      assertThat(engine.jobs().pause(c, "audited", "carol")).isTrue();
      assertThat(engine.jobs().pause(c, "audited", "carol")).as("already paused").isFalse();
      assertThat(engine.jobs().resume(c, "audited", null)).isTrue();
      assertThat(engine.jobs().cancel(c, cancelled, "dave")).as("already cancelled").isFalse();

      String role = text("SELECT session_user::text");
      List<AuditEntry> trail = engine.jobs().history(c, "audited", 10);
      assertThat(trail)
          .extracting(a -> a.action() + ":" + a.actor() + ":" + a.jobId())
          .containsExactly(
              "resume:" + role + ":null",
              "pause:carol:null",
              "replay:bob:" + dead,
              "cancel:alice:" + cancelled);
      assertThat(trail).allSatisfy(a -> assertThat(a.at()).isAfter(before));
      assertThat(engine.jobs().history(c, cancelled))
          .extracting(AuditEntry::action, AuditEntry::actor)
          .containsExactly(org.assertj.core.groups.Tuple.tuple("cancel", "alice"));
    }
  }

  @Test
  void aRolledBackActionLeavesNoAuditEntry() throws SQLException {
    long id = db.queryLong("SELECT pgbus.enqueue('rolledback', '{}')");
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThat(engine.jobs().cancel(c, id, "alice")).isTrue();
      assertThat(engine.jobs().pause(c, "rolledback", "alice")).isTrue();
      c.rollback();
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit")).isZero();
    assertThat(db.job(id).state()).isEqualTo("available");
  }

  @Test
  void anSqlPauseIsAuditedAsTheSessionUser() throws SQLException {
    db.queryLong("SELECT pgbus.pause('manual')::int");
    db.queryLong("SELECT pgbus.resume('manual')::int");
    try (Connection c = db.connect()) {
      assertThat(engine.jobs().history(c, "manual", 5))
          .extracting(AuditEntry::actor)
          .containsOnly(text("SELECT session_user::text"));
    }
  }

  @Test
  void retentionDeletesAuditEntriesOlderThanTheAuditRetentionOnly() {
    db.update(
        "INSERT INTO pgbus.audit (at, actor, action, queue) VALUES"
            + " (now() - interval '2 hours', 'old', 'pause', 'kept'),"
            + " (now(), 'new', 'resume', 'kept')");
    engines.start(
        engines
            .config()
            .pruneInterval(Duration.ofMillis(100))
            .auditRetention(Duration.ofHours(1))
            .capsule("main", 1, "nothing")
            .build(),
        (job, tx) -> null);
    Await.until(
        "the old entry pruned",
        Duration.ofSeconds(20),
        () -> db.queryLong("SELECT count(*) FROM pgbus.audit WHERE actor = 'old'") == 0);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.audit WHERE actor = 'new'")).isEqualTo(1);
  }

  @Test
  void aCorrelationIdIsBoundedAndPrintable() {
    assertThatThrownBy(() -> EnqueueOptions.defaults().withCorrelationId(" "))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("must not be blank");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withCorrelationId("x".repeat(129)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("use at most 128");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withCorrelationId("a\nb"))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("control character");
    assertThat(EnqueueOptions.defaults().withCorrelationId("x".repeat(128)).correlationId())
        .hasSize(128);
  }

  @Test
  void theDatabaseRefusesAnOverlongPrincipalOrCorrelationIdFromSql() {
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT pgbus.enqueue('orders', '{}') FROM (SELECT set_config('pgbus.correlation_id', repeat('x', 129), true)) s"))
        .hasStackTraceContaining("job_correlation_id_check");
  }

  private static String text(String sql, Object... args) throws SQLException {
    try (Connection c = db.helperConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }
}

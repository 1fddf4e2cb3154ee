package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.NotificationListener.Received;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An enqueue and its wake-up join the caller's transaction: a rollback leaves no job and no
 * notification, the notification is delivered only at commit, and a batch sends one notification
 * per queue.
 *
 * <p>"Nothing arrived" is proved with a barrier (see {@link NotificationListener#untilBarrier}):
 * notifications are delivered in commit order, so whatever was not there before a later barrier was
 * never sent. A short window after the rollback is checked as well.
 */
class TransactionalEnqueueTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final Duration QUIET_WINDOW = Duration.ofMillis(300);
  private static final Duration ARRIVAL = Duration.ofSeconds(5);

  private Engine engine;

  @BeforeEach
  void engineWithoutLoops() {
    db.update("DELETE FROM pgbus.job");
    // Only the enqueue API is used; the engine is never started.
    engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
  }

  @Test
  void aRolledBackJavaEnqueueLeavesNoJobAndSendsNoNotification() throws Exception {
    try (NotificationListener listener = db.listen("tx_java");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      long id = engine.jobs().enqueue(c, NewJob.of("tx_java", "{\"a\":1}"));
      assertThat(id).isPositive();
      c.rollback();

      assertThat(listener.during(QUIET_WINDOW)).isEmpty();
      assertThat(listener.untilBarrier()).isEmpty();
      assertThat(db.jobCount()).isZero();

      long committed = engine.jobs().enqueue(c, NewJob.of("tx_java", "{\"a\":2}"));
      c.commit();

      assertThat(listener.next("tx_java", ARRIVAL)).isEqualTo(nowWake("tx_java"));
      assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(committed);
    }
  }

  @Test
  void aRolledBackSqlEnqueueLeavesNoJobAndSendsNoNotification() throws Exception {
    try (NotificationListener listener = db.listen("tx_sql");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      sqlEnqueue(c, "tx_sql");
      c.rollback();

      assertThat(listener.during(QUIET_WINDOW)).isEmpty();
      assertThat(listener.untilBarrier()).isEmpty();
      assertThat(db.jobCount()).isZero();

      long committed = sqlEnqueue(c, "tx_sql");
      c.commit();

      assertThat(listener.next("tx_sql", ARRIVAL)).isEqualTo(nowWake("tx_sql"));
      assertThat(db.queryLongs("SELECT id FROM pgbus.job")).containsExactly(committed);
    }
  }

  @Test
  void theNotificationArrivesOnlyAfterCommit() throws Exception {
    try (NotificationListener listener = db.listen("tx_commit");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      engine.jobs().enqueue(c, NewJob.of("tx_commit", "{}"));

      // A barrier committed by another transaction overtakes the open one.
      assertThat(listener.untilBarrier()).isEmpty();
      assertThat(listener.during(QUIET_WINDOW)).isEmpty();

      c.commit();

      assertThat(listener.next("tx_commit", ARRIVAL)).isEqualTo(nowWake("tx_commit"));
    }
  }

  @Test
  void aDelayedJobsNotificationCarriesItsDueTime() throws Exception {
    try (NotificationListener listener = db.listen("tx_delayed")) {
      long id =
          JobFixtures.in(db)
              .enqueue("tx_delayed", EnqueueOptions.defaults().withDelay(Duration.ofMinutes(10)));

      Received wake = listener.next("tx_delayed", ARRIVAL);

      assertThat(wake).isNotNull();
      long dueMillis = Long.parseLong(wake.payload());
      long runAtMicros =
          db.queryLong(
              "SELECT (extract(epoch FROM run_at) * 1000000)::bigint FROM pgbus.job WHERE id = ?",
              id);
      // The hint must never be earlier than run_at, or a capsule would wake before the job is due.
      assertThat(dueMillis * 1000).isGreaterThanOrEqualTo(runAtMicros);
      assertThat(dueMillis * 1000 - runAtMicros).isLessThan(1000);
    }
  }

  @Test
  void aBatchSendsOneNotificationPerQueue() throws Exception {
    try (NotificationListener listener = db.listen("batch_a", "batch_b", "batch_c");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      var batch = new ArrayList<NewJob>();
      for (int i = 0; i < 50; i++) {
        String queue = i % 2 == 0 ? "batch_a" : "batch_b";
        batch.add(JobFixtures.job(queue, i, EnqueueOptions.defaults()));
      }
      List<Long> ids = engine.jobs().enqueueAll(c, batch);
      c.commit();

      assertThat(ids).hasSize(50).isSorted().doesNotHaveDuplicates();
      assertThat(listener.untilBarrier())
          .containsExactlyInAnyOrder(nowWake("batch_a"), nowWake("batch_b"));
      assertThat(db.jobCount("batch_a", "available")).isEqualTo(25);
      assertThat(db.jobCount("batch_b", "available")).isEqualTo(25);
    }
  }

  @Test
  void manyEnqueuesInOneTransactionSendOneNotificationPerQueue() throws Exception {
    try (NotificationListener listener = db.listen("many_a", "many_b");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < 10; i++) {
        engine.jobs().enqueue(c, NewJob.of("many_a", "{}"));
        sqlEnqueue(c, "many_b");
      }
      engine.jobs().enqueueAll(c, List.of(NewJob.of("many_a", "{}"), NewJob.of("many_b", "{}")));
      c.commit();

      assertThat(listener.untilBarrier())
          .containsExactlyInAnyOrder(nowWake("many_a"), nowWake("many_b"));
    }
  }

  @Test
  void aBatchReturnsIdsInInputOrderWithEachPayloadInPlace() throws Exception {
    var batch = new ArrayList<NewJob>();
    for (int i = 0; i < 20; i++) {
      batch.add(JobFixtures.job("ordered_batch", i, EnqueueOptions.defaults()));
    }
    List<Long> ids;
    try (Connection c = db.connect()) {
      ids = engine.jobs().enqueueAll(c, batch);
    }

    for (int i = 0; i < ids.size(); i++) {
      assertThat(db.job(ids.get(i)).payload()).isEqualTo("{\"n\": " + i + "}");
    }
  }

  private static Received nowWake(String queue) {
    return new Received(NotificationListener.channel(queue), "");
  }

  private static long sqlEnqueue(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?, '{}')")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

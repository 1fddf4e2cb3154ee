package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.NotificationListener.Received;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The SQL path's wake at commit (V27, docs/architecture.md "The SQL path"): the enqueue functions
 * send no NOTIFY themselves; pgbus.job's deferred trigger sends it at commit, in the default mode
 * only when no wake for the queue went out a moment ago or is being sent right now, and a capsule's
 * tail claim finds the job whose wake was skipped.
 *
 * <p>"A wake is being sent right now" is made deterministic by holding the queue's clock row
 * locked, as a committing sender does from its trigger to its commit.
 */
class SqlWakeTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.wake_clock");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** Far longer than any test here: a job that runs at all was not found by a poll. */
  private static final Duration NO_POLLING = Duration.ofMinutes(10);

  private static final Duration ARRIVAL = Duration.ofSeconds(5);

  @BeforeEach
  @AfterEach
  void defaultMode() {
    db.update("UPDATE pgbus.setting SET wake_mode = 'coalesced'");
  }

  @Test
  void aCommitWhileAnotherIsSendingTheQueuesWakeSendsNoneOfItsOwn() throws Exception {
    try (NotificationListener listener = db.listen("busy");
        Connection sender = db.connect();
        Connection other = db.connect()) {
      // A wake sent an hour ago. Without a row, the other's insert of it would wait for the
      // sender's commit.
      db.update("INSERT INTO pgbus.wake_clock VALUES ('busy', false, now() - interval '1 hour')");
      sender.setAutoCommit(false);
      enqueue(sender, "busy");
      // The sender's trigger runs now instead of at commit: the clock row stays locked until then.
      execute(sender, "SET CONSTRAINTS pgbus.job_wake IMMEDIATE");

      enqueue(other, "busy"); // autocommit
      assertThat(listener.untilBarrier()).as("the other commit's wake").isEmpty();

      sender.commit();
      assertThat(listener.untilBarrier()).containsExactly(nowWake("busy"));
      assertThat(db.jobCount("busy", "available")).isEqualTo(2);
    }
  }

  @Test
  void aJobWhoseWakeWasSkippedStartsAtTheTailClaimNotAtThePollCeiling() throws Exception {
    var events = new RecordingEvents();
    var firstRunning = new CountDownLatch(1);
    var releaseFirst = new CountDownLatch(1);
    // One slot, up to 5 jobs a claim: the claim that takes the first job is not full, so no
    // backlog claim follows it; only the tail can find the second job.
    EngineConfig config =
        engines
            .config()
            .capsule(new CapsuleConfig("tail", List.of("tail"), 1, 5))
            .pollInterval(NO_POLLING)
            .pollCeiling(NO_POLLING)
            .build();
    Engine engine =
        engines.start(
            engines
                .builder(config)
                .events(events)
                .jobs(
                    (job, tx) -> {
                      firstRunning.countDown();
                      releaseFirst.await(30, TimeUnit.SECONDS);
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(engine);

    try (NotificationListener listener = db.listen("tail");
        Connection holder = db.connect();
        Connection c = db.connect()) {
      long first = enqueue(c, "tail");
      assertThat(firstRunning.await(10, TimeUnit.SECONDS)).as("the first job runs").isTrue();
      // A wake of the queue being sent that then fails to commit: the second job's is skipped.
      holder.setAutoCommit(false);
      execute(holder, "SELECT 1 FROM pgbus.wake_clock WHERE queue::text = 'tail' FOR UPDATE");
      long second = enqueue(c, "tail");
      holder.rollback();
      assertThat(listener.untilBarrier())
          .as("the first job's wake, and none for the second")
          .containsExactly(nowWake("tail"));

      releaseFirst.countDown();
      events.awaitFinished(first, 1, ARRIVAL);
      events.awaitFinished(second, 1, ARRIVAL);
    }
  }

  @Test
  void aWakeSkippedWithNoWakeBeforeItIsBoundedByThePollCeiling() throws Exception {
    var events = new RecordingEvents();
    Duration ceiling = Duration.ofSeconds(1);
    EngineConfig config =
        engines
            .config()
            .capsule("lost", 1, "lost")
            .pollInterval(ceiling)
            .pollCeiling(ceiling)
            .build();
    Engine engine =
        engines.start(engines.builder(config).events(events).jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    db.update("INSERT INTO pgbus.wake_clock VALUES ('lost', false, now() - interval '1 hour')");

    try (NotificationListener listener = db.listen("lost");
        Connection holder = db.connect();
        Connection c = db.connect()) {
      holder.setAutoCommit(false);
      execute(holder, "SELECT 1 FROM pgbus.wake_clock WHERE queue::text = 'lost' FOR UPDATE");
      long id = enqueue(c, "lost");
      holder.rollback();
      assertThat(listener.untilBarrier()).as("a wake lost").isEmpty();

      events.awaitFinished(id, 1, ceiling.plus(ARRIVAL));
    }
  }

  @Test
  void inTransactionModeSendsAWakeAtEveryCommit() throws Exception {
    db.update("UPDATE pgbus.setting SET wake_mode = 'in_transaction'");
    try (NotificationListener listener = db.listen("every");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      enqueue(c, "every");
      assertThat(listener.untilBarrier()).as("before the commit").isEmpty();
      c.commit();
      enqueue(c, "every");
      c.commit();
      enqueue(c, "every");
      c.commit();

      assertThat(listener.untilBarrier())
          .containsExactly(nowWake("every"), nowWake("every"), nowWake("every"));
    }
  }

  @Test
  void aTransactionThatLeavesTheWakeToItsClientSendsNone() throws Exception {
    for (String mode : List.of("coalesced", "in_transaction")) {
      db.update("UPDATE pgbus.setting SET wake_mode = ?", mode);
      try (NotificationListener listener = db.listen("client_" + mode.charAt(0));
          Connection c = db.connect()) {
        c.setAutoCommit(false);
        execute(c, "SELECT pg_catalog.set_config('pgbus.wake', 'client', true)");
        enqueue(c, "client_" + mode.charAt(0));
        c.commit();

        assertThat(listener.untilBarrier()).as(mode).isEmpty();
        assertThat(db.jobCount("client_" + mode.charAt(0), "available")).isEqualTo(1);
      }
    }
  }

  @Test
  void laterJobsOfOneTransactionWakeOnceWithTheirEarliestDueTime() throws Exception {
    try (NotificationListener listener = db.listen("later");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      for (int minutes : new int[] {30, 10, 20}) {
        execute(
            c,
            "SELECT pgbus.enqueue('later', '{}', run_at => now() + interval '"
                + minutes
                + " minutes')");
      }
      execute(c, "SELECT pgbus.enqueue('later', '{}')");
      c.commit();

      List<Received> got = listener.untilBarrier();
      assertThat(got).hasSize(2).contains(nowWake("later"));
      long hint =
          Long.parseLong(
              got.stream().filter(r -> !r.payload().isEmpty()).findFirst().orElseThrow().payload());
      assertThat(hint).isEqualTo(dueMillis(c));
    }
  }

  // V48: pgbus.wake_now remembers only the last queue due now; it must not swallow a later job
  // of that queue, nor a queue that comes back after another in the same batch.
  @Test
  void aLaterJobAfterAJobDueNowOfTheSameQueueStillWakesWithItsDueTime() throws Exception {
    try (NotificationListener listener = db.listen("mixed");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      execute(c, "SELECT pgbus.enqueue('mixed', '{}')");
      execute(c, "SELECT pgbus.enqueue('mixed', '{}', run_at => now() + interval '20 minutes')");
      execute(c, "SELECT pgbus.enqueue('mixed', '{}')");
      execute(c, "SELECT pgbus.enqueue('mixed', '{}', run_at => now() + interval '10 minutes')");
      c.commit();

      List<Received> got = listener.untilBarrier();
      assertThat(got).hasSize(2).contains(nowWake("mixed"));
      long hint =
          Long.parseLong(
              got.stream().filter(r -> !r.payload().isEmpty()).findFirst().orElseThrow().payload());
      assertThat(hint).isEqualTo(dueMillis(c));
    }
  }

  @Test
  void aBatchOfInterleavedQueuesWakesEachQueueOnce() throws Exception {
    try (NotificationListener listener = db.listen("inter_a", "inter_b");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      execute(
          c,
          """
          SELECT count(*) FROM pgbus.enqueue_many(
            ARRAY['inter_a', 'inter_b', 'inter_a', 'inter_b', 'inter_a'],
            array_fill('{}'::jsonb, ARRAY[5]), NULL, array_fill(0, ARRAY[5]),
            array_fill(25, ARRAY[5]))
          """);
      execute(c, "SELECT pgbus.enqueue('inter_b', '{}')");
      c.commit();

      assertThat(listener.untilBarrier())
          .containsExactlyInAnyOrder(nowWake("inter_a"), nowWake("inter_b"));
      assertThat(db.jobCount("inter_a", "available")).isEqualTo(3);
    }
  }

  @Test
  void aSavepointRolledBackTakesItsQueuedWakeWithItAndTheNextEnqueueQueuesItAgain()
      throws Exception {
    try (NotificationListener listener = db.listen("savepoint");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      var savepoint = c.setSavepoint();
      enqueue(c, "savepoint");
      c.rollback(savepoint);
      enqueue(c, "savepoint");
      c.commit();

      assertThat(listener.untilBarrier()).containsExactly(nowWake("savepoint"));
    }
  }

  @Test
  void pgbusWakeSendsOnePerQueueAndKindAndNoneWhileThoseAreBeingSent() throws Exception {
    try (NotificationListener listener = db.listen("w_a", "w_b");
        Connection sender = db.connect();
        Connection other = db.connect()) {
      // Wakes sent an hour ago: without the rows, the other's insert of them would wait for the
      // sender's commit.
      db.update(
          "INSERT INTO pgbus.wake_clock SELECT q, l, now() - interval '1 hour'"
              + " FROM unnest(ARRAY['w_a', 'w_b']::pgbus.queue_name[]) q, unnest(ARRAY[false, true]) l");
      sender.setAutoCommit(false);
      assertThat(
              wake(
                  sender,
                  "ARRAY['w_a', 'w_a', 'w_b', 'w_a'],"
                      + " ARRAY[NULL, now() + interval '1 hour', NULL, now()]"))
          .as("now and later for w_a, now for w_b")
          .isEqualTo(3);

      assertThat(wake(other, "ARRAY['w_a', 'w_b']")).as("the sender holds their clock").isZero();
      sender.commit();

      assertThat(listener.untilBarrier()).hasSize(3).contains(nowWake("w_a"), nowWake("w_b"));
    }
  }

  @Test
  void pgbusWakeRefusesInputOutsideItsBounds() throws Exception {
    try (Connection c = db.connect()) {
      assertThatThrownBy(() -> execute(c, "SELECT pgbus.wake(ARRAY['a', 'b'], ARRAY[now()])"))
          .hasMessageContaining("got 2 queues and 1 due times");
      assertThatThrownBy(() -> execute(c, "SELECT pgbus.wake(array_fill('a'::text, ARRAY[10001]))"))
          .hasMessageContaining("10001 queues is over the limit of 10000");
      assertThatThrownBy(() -> execute(c, "SELECT pgbus.wake(ARRAY['Not a queue'])"))
          .hasMessageContaining("Not a queue");
      assertThatThrownBy(
              () -> execute(c, "SELECT pgbus.wake(ARRAY['a'], ARRAY['infinity'::timestamptz])"))
          .hasMessageContaining("infinity");
    }
  }

  private static long dueMillis(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT ceil(extract(epoch FROM min(run_at))::numeric * 1000.0)::bigint"
                    + " FROM pgbus.job WHERE run_at > now()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static int wake(Connection c, String arguments) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT pgbus.wake(" + arguments + ")")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static Received nowWake(String queue) {
    return new Received(NotificationListener.channel(queue), "");
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static long enqueue(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pgbus.enqueue(?, '{}')")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}

package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.NotificationListener;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * In {@code pgbus.wake-mode=coalesced} a Java enqueue leaves its wake to the engine (issue #26): it
 * tells the database so in its own statement ({@code pgbus.wake = 'client'}), and the engine wakes
 * after the commit, this JVM's capsules in-process and the other JVMs through one coalescing
 * sender; a rolled back transaction wakes nobody.
 */
class AfterCommitWakeTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** Far beyond every wait here: a job that runs sooner was woken, not polled. */
  private static final Duration CEILING = Duration.ofSeconds(60);

  private static final Duration PROMPT = Duration.ofSeconds(10);

  @Test
  void aJavaEnqueueTellsTheDatabaseInItsOwnStatementThatTheClientWakes() throws Exception {
    Engine engine = engines.start(engines.config().build(), (job, tx) -> Outcome.complete());
    try (Connection c = db.connect()) {
      LocalAfterCommit local = engine.localAfterCommit();
      c.setAutoCommit(false);
      local.begin(c);
      try {
        engine.jobs().enqueue(c, NewJob.of("client_wake", "{}"));
        assertThat(setting(c)).isEqualTo("client");
      } finally {
        local.ended(c);
        c.rollback();
      }
    }
  }

  @Test
  void inTransactionModeLeavesTheWakeToTheDatabase() throws Exception {
    Engine engine =
        engines.start(
            engines.config().wakeMode(WakeMode.IN_TRANSACTION).build(),
            (job, tx) -> Outcome.complete());
    try (NotificationListener listener = db.listen("db_wake");
        Connection c = db.connect()) {
      c.setAutoCommit(false);
      engine.jobs().enqueue(c, NewJob.of("db_wake", "{}"));
      assertThat(setting(c)).isNullOrEmpty();
      c.commit();
      assertThat(listener.next("db_wake", PROMPT)).isNotNull();
    }
    assertThat(engine.status().wakes().handed()).isZero();
    assertThat(engine.localAfterCommit()).isNull();
  }

  @Test
  void theLocalCapsuleStartsACommittedJobInProcessWithoutAnyListener() {
    var events = new RecordingEvents();
    // No listener connections: this engine hears no NOTIFY at all and polls once a minute.
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("local", 2, "local_wake")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build(),
                    db.dataSource())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    awaitFirstPollDone(engine);

    long started = System.nanoTime();
    long id = engine.jobs().enqueue(autoCommit(), NewJob.of("local_wake", "{}"));

    events.awaitFinished(id, 1, PROMPT);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(PROMPT);
    assertThat(engine.status().wakes().local()).isEqualTo(1);
  }

  @Test
  void aHandlersEnqueueWakesAfterItsJobCommitsAndARolledBackOneWakesNobody() {
    var events = new RecordingEvents();
    var self = new AtomicReference<Engine>();
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("parents", 1, "parent")
                        .capsule("children", 1, "child")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build(),
                    db.dataSource())
                .events(events)
                .jobs(
                    (job, tx) -> {
                      if (job.queue().equals("parent")) {
                        // The handler's connection is in the engine's own transaction.
                        self.get()
                            .jobs()
                            .enqueue(tx, NewJob.of("child", "{\"parent\": " + job.id() + "}"));
                        if (job.payload().contains("fail")) {
                          throw new IllegalStateException("rolls the child back");
                        }
                      }
                      return Outcome.complete();
                    }));
    self.set(engine);
    awaitFirstPollDone(engine);

    long failing =
        engine
            .jobs()
            .enqueue(
                autoCommit(),
                new NewJob(
                    "parent", "{\"fail\": 1}", EnqueueOptions.defaults().withMaxAttempts(1)));
    events.awaitFinished(failing, 1, PROMPT);
    long afterRollback = engine.status().wakes().local();
    long ok = engine.jobs().enqueue(autoCommit(), NewJob.of("parent", "{\"ok\": 1}"));
    events.awaitFinished(ok, 1, PROMPT);
    Await.until("the child's job", PROMPT, () -> db.jobCount("child", "completed") == 1);

    // Each parent's enqueue woke once; the failed parent's child, rolled back, did not.
    assertThat(afterRollback).isEqualTo(1);
    assertThat(engine.status().wakes().local()).isEqualTo(3);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE queue = 'child'")).isEqualTo(1);
  }

  @Test
  void theSenderWakesTheOtherEnginesWithCoalescedNotifies() throws Exception {
    var events = new RecordingEvents();
    Engine consumer =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("remote", 4, "remote_wake")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(consumer);
    // A producer without capsules: nothing of it hears its own enqueues.
    Engine producer =
        engines.start(Engine.builder(engines.config().build(), db.dataSource()).maintenance(false));
    int writers = 8;
    int each = 50;
    ExecutorService threads = Executors.newFixedThreadPool(writers);
    List<Future<List<Long>>> futures = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      futures.add(
          threads.submit(
              () -> {
                var ids = new ArrayList<Long>();
                try (Connection c = db.connect()) {
                  for (int i = 0; i < each; i++) {
                    ids.add(producer.jobs().enqueue(c, NewJob.of("remote_wake", "{}")));
                  }
                }
                return ids;
              }));
    }
    var ids = new ArrayList<Long>();
    for (Future<List<Long>> f : futures) {
      ids.addAll(f.get());
    }
    threads.shutdown();

    events.awaitFinished(Outcome.Kind.COMPLETE, ids.size(), PROMPT);
    EngineStatus.Wakes wakes = producer.status().wakes();
    assertThat(wakes.handed()).isEqualTo(writers * each);
    assertThat(wakes.failed()).isZero();
    assertThat(wakes.statements()).isPositive().isLessThanOrEqualTo(wakes.handed());
    assertThat(wakes.sent() + wakes.coalesced()).isEqualTo(wakes.handed());
  }

  @Test
  void aDelayedJobsWakeCarriesItsDueTime() throws Exception {
    Engine producer =
        engines.start(Engine.builder(engines.config().build(), db.dataSource()).maintenance(false));
    try (NotificationListener listener = db.listen("due_wake")) {
      long id =
          producer
              .jobs()
              .enqueue(
                  autoCommit(),
                  new NewJob(
                      "due_wake",
                      "{}",
                      EnqueueOptions.defaults().withDelay(Duration.ofMinutes(5))));
      NotificationListener.Received wake = listener.next("due_wake", PROMPT);
      assertThat(wake).isNotNull();
      long runAtMillis =
          db.queryLong(
              "SELECT (extract(epoch FROM run_at) * 1000)::bigint FROM pgbus.job WHERE id = ?", id);
      // Never earlier than run_at (a capsule would claim too soon); the engine takes its clock
      // after the statement, so the hint is later by that statement's time at most.
      assertThat(Long.parseLong(wake.payload()) - runAtMillis).isBetween(0L, 1_000L);
      Await.until("the sender's send", PROMPT, () -> producer.status().wakes().sent() == 1);
      assertThat(producer.status().wakes().handed()).isEqualTo(1);
    }
  }

  @Test
  void theListenerDropsTheEchoOfItsOwnSenderButNotAnotherBackendsWake() throws Exception {
    var events = new RecordingEvents();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("echo", 1, "echo_wake")
                        .pollInterval(CEILING)
                        .pollCeiling(CEILING)
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    Connection c = autoCommit();
    int jobs = 50;
    for (int i = 0; i < jobs; i++) {
      long id = engine.jobs().enqueue(c, NewJob.of("echo_wake", "{}"));
      events.awaitFinished(id, 1, PROMPT); // one at a time: each send's echo comes back alone
    }
    Await.until("the last echo", PROMPT, () -> engine.status().wakes().echoes() >= jobs * 9L / 10);
    EngineStatus.Wakes wakes = engine.status().wakes();
    assertThat(wakes.local()).isEqualTo(jobs);
    assertThat(wakes.echoes()).isLessThanOrEqualTo(wakes.sent());
    // Before the echo was dropped, each job cost a second claim that found nothing (1.17 per job in
    // CONC); what is left is the poll and the tail claims a loaded machine lets through.
    long empty = engine.status().capsules().get(0).emptyClaims();
    assertThat(empty).as("empty claims for %d jobs", jobs).isLessThan(jobs / 2);

    // Right after a send, a wake of the same queue from another backend (an SQL enqueue) still
    // wakes: the job starts long before the poll ceiling.
    long id = engine.jobs().enqueue(c, NewJob.of("echo_wake", "{}"));
    long sql;
    try (Connection other = db.connect();
        Statement s = other.createStatement();
        ResultSet rs = s.executeQuery("SELECT pgbus.enqueue('echo_wake', '{}')")) {
      rs.next();
      sql = rs.getLong(1);
    }
    events.awaitFinished(id, 1, PROMPT);
    events.awaitFinished(sql, 1, PROMPT);
  }

  private static String setting(Connection c) throws Exception {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT current_setting('pgbus.wake', true)")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private Connection autoCommit() {
    try {
      Connection c = db.connect();
      opened.add(c);
      return c;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private final List<Connection> opened = new ArrayList<>();

  @AfterEach
  void closeConnections() throws Exception {
    for (Connection c : opened) {
      c.close();
    }
    opened.clear();
  }

  private static void awaitFirstPollDone(Engine engine) {
    Await.until("the first poll", PROMPT, () -> engine.status().ticks() > 0);
  }
}

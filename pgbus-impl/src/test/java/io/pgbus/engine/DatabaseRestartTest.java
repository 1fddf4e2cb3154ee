package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.PrivateCluster;
import io.pgbus.engine.testing.RecordingEvents;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The database itself goes away, on a private cluster of this class's own: a restart under load
 * costs each engine exactly one listener reconnect and loses or doubles no job; an engine started
 * while the database is down works once it comes up; and a stop while the database is down returns
 * after the drain timeout, leaving the running job to lease rescue.
 */
class DatabaseRestartTest {

  private static final String QUEUE = "load";
  private static final Duration LEASE = Duration.ofSeconds(3);

  private static PrivateCluster pg;

  private final List<Engine> engines = new ArrayList<>();

  @BeforeAll
  static void startCluster() {
    pg = PrivateCluster.onFreePort().start();
    Schema.migrate(pg.dataSource());
  }

  @AfterAll
  static void removeCluster() {
    if (pg != null) {
      pg.close();
    }
  }

  @BeforeEach
  void freshTables() throws SQLException {
    pg.start();
    update("DELETE FROM pgbus.job");
    update(
        "CREATE TABLE IF NOT EXISTS handled (job_id bigint, attempt int, worker text, payload text)");
    update("DELETE FROM handled");
  }

  @AfterEach
  void stopEngines() {
    engines.forEach(Engine::stop);
  }

  @Test
  void aRestartUnderLoadCostsOneReconnectPerEngineAndRunsEveryJobExactlyOnce() throws Exception {
    Engine a = start(config("jvm-a"), this::handle, new RecordingEvents());
    Engine b = start(config("jvm-b"), this::handle, new RecordingEvents());
    awaitDelivering(a, b);

    // A producer enqueues 400 jobs one by one, retrying each until it commits: before, during and
    // after the restart.
    int total = 400;
    var enqueued = new AtomicInteger();
    var enqueueFailures = new AtomicInteger();
    Thread producer = new Thread(() -> produce(total, enqueued, enqueueFailures), "producer");
    producer.start();
    try {
      Await.until("100 jobs enqueued", Duration.ofSeconds(30), enqueued::get, n -> n >= 100);
      long stopped = System.nanoTime();
      pg.stop();
      Await.until(
          "both listeners to notice",
          Duration.ofSeconds(5),
          () -> !a.listenerState().delivering() && !b.listenerState().delivering());
      Duration toNotice = Measurements.since(stopped);
      waitOut(Duration.ofMillis(1500)); // the outage
      long restarted = System.nanoTime();
      pg.start();
      Duration outage = Measurements.since(stopped);
      awaitDelivering(a, b);
      Duration toDelivering = Measurements.since(restarted);
      producer.join(TimeUnit.SECONDS.toMillis(60));
      long produced = System.nanoTime();
      Await.until(
          "every job to complete",
          Duration.ofSeconds(60),
          () -> count("SELECT count(*) FROM pgbus.job WHERE state = 'completed'") == jobRows());
      Duration toAllDone = Measurements.since(restarted);
      Duration lastEnqueueToAllDone = Measurements.since(produced);

      assertThat(producer.isAlive()).as("producer still running").isFalse();
      assertThat(count("SELECT count(DISTINCT payload) FROM pgbus.job"))
          .as("every enqueued payload is in the table")
          .isEqualTo(total);
      assertThat(count("SELECT count(*) FROM handled")).as("handler commits").isEqualTo(jobRows());
      assertThat(
              count(
                  "SELECT count(*) FROM (SELECT job_id FROM handled GROUP BY job_id"
                      + " HAVING count(*) <> 1) twice"))
          .as("jobs whose handler committed other than once")
          .isZero();
      for (Engine e : List.of(a, b)) {
        assertThat(e.notifier().connects())
            .as(e.config().workerId() + ": listener connects (start + one reconnect)")
            .isEqualTo(2);
        assertThat(e.notifier().attempts() - e.notifier().connects())
            .as(e.config().workerId() + ": failed reconnect attempts in a 1.5 s outage")
            .isLessThanOrEqualTo(8);
      }
      Measurements.record("restart: stop -> both listeners not delivering", toNotice);
      Measurements.record("restart: outage (stop -> start)", outage);
      Measurements.record("restart: start -> both listeners delivering", toDelivering);
      Measurements.record("restart: start -> all 400 jobs done", toAllDone);
      Measurements.record("restart: last enqueue -> all jobs done", lastEnqueueToAllDone);
      Measurements.record(
          "restart: enqueue attempts refused during the outage", enqueueFailures.get());
      Measurements.record(
          "restart: listener connects per engine (a, b)",
          a.notifier().connects() + ", " + b.notifier().connects());
      Measurements.record(
          "restart: listener connection attempts per engine (a, b)",
          a.notifier().attempts() + ", " + b.notifier().attempts());
      Measurements.record(
          "restart: jobs rescued after their lease (in flight at the stop)",
          count("SELECT count(*) FROM pgbus.job WHERE errors::text LIKE '%lease expired%'"));
      Measurements.record(
          "restart: job rows for 400 payloads (an ambiguous commit would enqueue twice)",
          jobRows());
    } finally {
      producer.interrupt();
      producer.join(TimeUnit.SECONDS.toMillis(10));
    }
  }

  @Test
  void anEngineStartedWhileTheDatabaseIsDownRunsJobsOnceItComesUp() throws Exception {
    pg.stop();
    var events = new RecordingEvents();
    Engine engine = start(config("late"), this::handle, events);
    Await.until(
        "the listener to report the database down",
        Duration.ofSeconds(10),
        engine::listenerState,
        s -> s == ListenerState.RECONNECTING);
    waitOut(Duration.ofSeconds(1)); // every loop fails for a while

    long up = System.nanoTime();
    pg.start();
    awaitDelivering(engine);
    Duration toDelivering = Measurements.since(up);
    long id = new JobFixtures(pg.dataSource()).enqueue(QUEUE);
    assertThat(events.awaitFinished(id, 1, Duration.ofSeconds(10)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);

    assertThat(engine.running()).isTrue();
    assertThat(engine.capsules().get(0).status().sinceLastBeat()).isLessThan(Duration.ofSeconds(6));
    Measurements.record("late database: start -> listener delivering", toDelivering);
  }

  @Test
  void aStopWhileTheDatabaseIsDownReturnsAfterTheDrainAndLeavesTheJobToRescue() throws Exception {
    var running = new CountDownLatch(1);
    var release = new CountDownLatch(1);
    Duration drain = Duration.ofSeconds(1);
    Engine first =
        start(
            config("drained").drainTimeout(drain),
            (job, tx) -> {
              write(tx, job, "drained");
              running.countDown();
              release.await(30, TimeUnit.SECONDS);
              return Outcome.complete();
            },
            new RecordingEvents());
    long id = new JobFixtures(pg.dataSource()).enqueue(QUEUE);
    assertThat(running.await(10, TimeUnit.SECONDS)).as("the job runs").isTrue();

    pg.stop();
    long stopping = System.nanoTime();
    int left;
    try {
      left = first.stop();
    } finally {
      release.countDown(); // its commit fails: the database is gone
    }
    Duration stopTook = Measurements.since(stopping);
    assertThat(left).as("jobs left running after the drain").isEqualTo(1);
    assertThat(stopTook).as("stop with the database down").isLessThan(drain.plusSeconds(3));

    pg.start();
    var events = new RecordingEvents();
    long restarted = System.nanoTime();
    start(config("rescuer"), this::handle, events);
    assertThat(events.awaitFinished(id, 2, Duration.ofSeconds(20)).kind())
        .isEqualTo(Outcome.Kind.COMPLETE);
    Duration toRescued = Measurements.since(restarted);
    assertThat(count("SELECT count(*) FROM handled WHERE job_id = ?", id))
        .as("commits of the job's handler")
        .isEqualTo(1);
    assertThat(count("SELECT count(*) FROM handled WHERE worker = 'drained'")).isZero();
    Measurements.record("drain with the database down: stop() took (drain 1 s)", stopTook);
    Measurements.record(
        "drain with the database down: restart -> job rescued and done (lease 3 s)", toRescued);
  }

  @Test
  void aJobThatEndsWhileTheDatabaseIsDownIsSettledSecondsAfterItIsBackNotAfterItsLease()
      throws Exception {
    // A lease of 5 minutes (the default) and a retry a minute later: a job still running, or
    // rerun already, by the end of this test could only be the lease's or the retry's doing.
    Duration lease = Duration.ofMinutes(5);
    var running = new CountDownLatch(2);
    var databaseDown = new CountDownLatch(1);
    var events = new RecordingEvents();
    start(
        config("stranded")
            .lease(lease)
            .retry(new RetryPolicy(Duration.ofMinutes(1), Duration.ofMinutes(1), 0)),
        (job, tx) -> {
          write(tx, job, "stranded");
          running.countDown();
          databaseDown.await(30, TimeUnit.SECONDS);
          if (job.payload().replace(" ", "").equals("{\"n\":0}")) {
            throw new IllegalStateException("the handler's own failure during the outage");
          }
          return Outcome.complete(); // its commit meets the dead connection
        },
        events);
    List<Long> ids = new JobFixtures(pg.dataSource()).enqueue(QUEUE, 2);
    long failing = ids.get(0); // payload {"n":0}
    long finishing = ids.get(1);
    assertThat(running.await(10, TimeUnit.SECONDS)).as("both handlers run").isTrue();

    pg.stop();
    databaseDown.countDown(); // both handlers end now: one throws, one returns complete
    waitOut(Duration.ofSeconds(2)); // the outage
    long back = System.nanoTime();
    pg.start();
    Await.until(
        "both jobs to be settled",
        Duration.ofSeconds(20),
        () -> count("SELECT count(*) FROM pgbus.job WHERE state = 'running'") == 0);
    Duration toSettled = Measurements.since(back);

    assertThat(toSettled)
        .as("database back -> both jobs settled")
        .isLessThan(Duration.ofSeconds(10));
    assertThat(state(failing)).isEqualTo("retryable");
    assertThat(lastError(failing)).contains("the handler's own failure during the outage");
    assertThat(state(finishing)).as("its commit failed: retried").isEqualTo("retryable");
    assertThat(count("SELECT count(*) FROM handled"))
        .as("nothing committed in the outage")
        .isZero();
    Measurements.record(
        "restart: database back -> jobs that ended in the outage settled (lease 5 min)", toSettled);
  }

  private EngineConfig.Builder config(String worker) {
    return EngineConfig.builder()
        .workerId(worker)
        .capsule("main", 4, QUEUE)
        .lease(LEASE)
        .leaderTtl(Duration.ofSeconds(2))
        .rescueInterval(Duration.ofMillis(250))
        .pollInterval(Duration.ofMillis(500))
        // A new engine that finds a dead engine's leader lease still live waits for a tick to
        // report it free (Elector.followTicks): a second, not the default minute.
        .pollCeiling(Duration.ofSeconds(1))
        .reconnectMax(Duration.ofSeconds(2))
        .retry(new RetryPolicy(Duration.ofMillis(100), Duration.ofSeconds(1), 0.2))
        .drainTimeout(Duration.ofSeconds(5));
  }

  private Engine start(EngineConfig.Builder config, JobFunction jobs, RecordingEvents events) {
    String url = pg.jdbcUrl();
    Engine engine =
        Engine.builder(config.build(), pg.dataSource())
            .listenerConnections(() -> DriverManager.getConnection(url))
            .events(events)
            .jobs(jobs)
            .build();
    engines.add(engine);
    engine.start();
    return engine;
  }

  private Outcome handle(ClaimedJob job, Connection tx) throws SQLException {
    write(tx, job, "engine");
    return Outcome.complete();
  }

  private static void write(Connection tx, ClaimedJob job, String worker) throws SQLException {
    try (PreparedStatement ps = tx.prepareStatement("INSERT INTO handled VALUES (?, ?, ?, ?)")) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      ps.setString(3, worker);
      ps.setString(4, job.payload());
      ps.executeUpdate();
    }
  }

  /** Enqueues jobs 0..total-1 one at a time; each is retried until it commits. */
  private static void produce(int total, AtomicInteger enqueued, AtomicInteger failures) {
    var store = new JobStore();
    Connection c = null;
    try {
      for (int n = 0; n < total; n++) {
        while (true) {
          try {
            if (c == null) {
              c = pg.connect();
            }
            store.jobInsert(c, JobFixtures.job(QUEUE, n, EnqueueOptions.defaults()));
            break;
          } catch (SQLException e) {
            failures.incrementAndGet();
            close(c);
            c = null;
            TimeUnit.MILLISECONDS.sleep(50);
          }
        }
        enqueued.incrementAndGet();
        TimeUnit.MILLISECONDS.sleep(2);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      close(c);
    }
  }

  private static void awaitDelivering(Engine... engines) {
    for (Engine e : engines) {
      Await.until(
          e.config().workerId() + "'s listener to deliver",
          Duration.ofSeconds(20),
          e::listenerState,
          s -> s == ListenerState.DELIVERING);
    }
  }

  /** A stretch of time the test lets pass on purpose (an outage), not a wait for a condition. */
  private static void waitOut(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }

  private static String state(long id) throws SQLException {
    return text("SELECT state::text FROM pgbus.job WHERE id = ?", id);
  }

  private static String lastError(long id) throws SQLException {
    return text("SELECT errors->0->>'error' FROM pgbus.job WHERE id = ?", id);
  }

  /** The first column of the first row, as text. */
  private static String text(String sql, Object... args) throws SQLException {
    try (Connection c = pg.connect();
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

  private static long jobRows() throws SQLException {
    return count("SELECT count(*) FROM pgbus.job");
  }

  private static long count(String sql, Object... args) throws SQLException {
    return Long.parseLong(text(sql, args));
  }

  private static void update(String sql) throws SQLException {
    try (Connection c = pg.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.executeUpdate();
    }
  }

  private static void close(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // already broken
      }
    }
  }
}

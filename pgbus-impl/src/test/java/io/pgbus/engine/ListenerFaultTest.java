package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.FaultyListenerConnections;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TcpProxy;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Faults of the one LISTEN connection, and how the wake path heals: a terminated backend is noticed
 * within a second and replaced by one reconnect whose synthetic wake runs the job of the gap; a
 * listener that never hears its self-probe (a transaction-mode pooler) is DEGRADED and capsules
 * poll at the poll interval; the mode switches back and forth within one health cycle; and an idle,
 * healthy listener costs one statement per probe interval.
 */
class ListenerFaultTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration NEVER = Duration.ofSeconds(60);

  private final RecordingEvents events = new RecordingEvents();
  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void aTerminatedListenerIsNoticedWithinASecondAndOneReconnectRunsTheJobOfTheGap() {
    // No poll will run during the test (interval and ceiling 60 s): only the synthetic wake of the
    // reconnect can run a job whose NOTIFY was lost. Reconnecting waits 0.5-1.5 s, a gap long
    // enough to enqueue into.
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("main", 2, "gap")
                        .pollInterval(NEVER)
                        .pollCeiling(NEVER)
                        .reconnectMin(Duration.ofSeconds(1))
                        .reconnectMax(Duration.ofSeconds(2))
                        .build())
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    Notifier notifier = engine.notifier();

    for (int round = 1; round <= 3; round++) {
      long connects = notifier.connects();
      long killed = System.nanoTime();
      assertThat(terminateListener()).as("listener backends terminated").isEqualTo(1);

      Await.until(
          "the listener to stop delivering",
          Duration.ofSeconds(5),
          notifier::state,
          s -> !s.delivering());
      Duration toDegrade = Measurements.since(killed);
      long gapJob = jobs.enqueue("gap");
      assertThat(notifier.connects()).as("still in the gap after the enqueue").isEqualTo(connects);

      TestEngines.awaitDelivering(engine);
      Duration toRecover = Measurements.since(killed);
      events.awaitFinished(gapJob, 1, Duration.ofSeconds(10));
      Duration toGapJobDone = Measurements.since(killed);

      assertThat(toDegrade)
          .as("pg_terminate_backend to not delivering")
          .isLessThan(Duration.ofSeconds(1));
      assertThat(notifier.connects()).as("reconnects for one kill").isEqualTo(connects + 1);
      assertThat(db.job(gapJob).state()).isEqualTo("completed");
      Measurements.record("listener kill " + round + ": terminate -> not delivering", toDegrade);
      Measurements.record("listener kill " + round + ": terminate -> delivering again", toRecover);
      Measurements.record("listener kill " + round + ": terminate -> gap job done", toGapJobDone);
    }
    // Each (re)connect asks for one poll (the synthetic wake); no poll came from the timer.
    assertThat(engine.status().ticks()).as("polls").isLessThanOrEqualTo(notifier.connects() + 1);
  }

  @Test
  void aListenerThatNeverHearsItsProbeIsDegradedAndCapsulesPollSoNoJobIsStuck() {
    var deaf = new FaultyListenerConnections(db.jdbcUrl()).swallowListen(true);
    Duration pollInterval = Duration.ofMillis(200);
    Duration probeTimeout = Duration.ofMillis(500);
    long started = System.nanoTime();
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 2, "deaf")
                        .pollInterval(pollInterval)
                        .pollCeiling(NEVER)
                        .probeTimeout(probeTimeout)
                        .build(),
                    db.dataSource())
                .listenerConnections(deaf)
                .events(events)
                .jobs((job, tx) -> Outcome.complete()));

    Await.until(
        "the deaf listener to be degraded",
        Duration.ofSeconds(10),
        engine::listenerState,
        s -> s == ListenerState.DEGRADED);
    Duration toDegrade = Measurements.since(started);

    long polls = engine.status().ticks();
    Await.until(
        "capsules to poll at the poll interval",
        Duration.ofSeconds(10),
        () -> engine.status().ticks(),
        p -> p >= polls + 10);
    Duration tenPolls = Measurements.since(started).minus(toDegrade);

    Duration slowest = Duration.ZERO;
    for (int i = 0; i < 5; i++) {
      long enqueued = System.nanoTime();
      long id = jobs.enqueue("deaf");
      events.awaitFinished(id, 1, Duration.ofSeconds(10));
      Duration latency = Measurements.since(enqueued);
      slowest = latency.compareTo(slowest) > 0 ? latency : slowest;
    }

    assertThat(toDegrade).as("start to degraded").isLessThan(probeTimeout.plusSeconds(3));
    assertThat(slowest).as("slowest job, found by polling only").isLessThan(Duration.ofSeconds(3));
    assertThat(engine.notifier().notifications()).as("notifications heard").isZero();
    assertThat(engine.listenerState()).isEqualTo(ListenerState.DEGRADED);
    assertThat(db.jobCount("deaf", "completed")).isEqualTo(5);
    assertThat(deaf.opened()).as("a deaf connection is kept, not churned").isEqualTo(1);
    Measurements.record("deaf listener: start -> degraded (probe timeout 500 ms)", toDegrade);
    Measurements.record("deaf listener: 10 polls at a 200 ms poll interval took", tenPolls);
    Measurements.record("deaf listener: slowest of 5 jobs, enqueue -> done", slowest);
  }

  @Test
  void theModeSwitchesFromNotifyToPollingAndBackWithinOneHealthCycle() throws Exception {
    var faulty = new FaultyListenerConnections(db.jdbcUrl());
    Duration probeInterval = Duration.ofMillis(500);
    Duration probeTimeout = Duration.ofMillis(300);
    Duration healthCycle = probeInterval.plus(probeTimeout);
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 1, "modes")
                        .pollInterval(Duration.ofMillis(100))
                        .pollCeiling(NEVER)
                        .probeInterval(probeInterval)
                        .probeTimeout(probeTimeout)
                        .build(),
                    db.dataSource())
                .listenerConnections(faulty)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    awaitStartUpDone(engine);
    long pollsWhileDelivering = pollsDuring(engine, Duration.ofSeconds(1));

    long deafened = System.nanoTime();
    faulty.dropNotifications(true);
    Await.until(
        "polling mode", Duration.ofSeconds(10), engine::listenerState, s -> !s.delivering());
    Duration toPolling = Measurements.since(deafened);
    long polls = engine.status().ticks();
    Await.until(
        "fast polls", Duration.ofSeconds(10), () -> engine.status().ticks(), p -> p >= polls + 5);

    long healed = System.nanoTime();
    faulty.dropNotifications(false);
    TestEngines.awaitDelivering(engine);
    Duration toNotify = Measurements.since(healed);
    long pollsAfterHealing = pollsDuring(engine, Duration.ofSeconds(1));

    assertThat(pollsWhileDelivering).as("polls in 1 s while delivering").isLessThanOrEqualTo(1);
    // One health cycle, plus slack for a loaded machine: far below the 60 s a missed switch costs.
    assertThat(toPolling).as("notify -> polling").isLessThan(healthCycle.plusSeconds(2));
    assertThat(toNotify).as("polling -> notify").isLessThan(healthCycle.plusSeconds(2));
    assertThat(pollsAfterHealing).as("polls in 1 s after healing").isLessThanOrEqualTo(1);
    assertThat(faulty.opened()).as("connections opened").isEqualTo(1);
    Measurements.record("mode switch: notify -> polling (health cycle 800 ms)", toPolling);
    Measurements.record("mode switch: polling -> notify (health cycle 800 ms)", toNotify);
  }

  @Test
  void anIdleHealthyListenerSendsOneStatementPerProbeInterval() throws Exception {
    var counting = new FaultyListenerConnections(db.jdbcUrl());
    Duration probeInterval = Duration.ofMillis(500);
    Engine engine =
        engines.start(
            Engine.builder(
                    engines
                        .config()
                        .capsule("main", 4, "idle")
                        .probeInterval(probeInterval)
                        .build(),
                    db.dataSource())
                .listenerConnections(counting)
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    awaitStartUpDone(engine);
    Capsule capsule = engine.capsules().get(0);
    long statements = counting.statements();
    long polls = engine.status().ticks();
    long claims = capsule.status().claims();

    Duration window = Duration.ofSeconds(3);
    Thread.sleep(window.toMillis()); // an observation window: we count what happens in it

    long listenerStatements = counting.statements() - statements;
    assertThat(listenerStatements)
        .as("listener statements in 3 s at one probe per 500 ms")
        .isBetween(3L, 8L);
    assertThat(engine.status().ticks() - polls)
        .as("polls in 3 s at the 60 s ceiling")
        .isLessThanOrEqualTo(1);
    assertThat(capsule.status().claims() - claims).as("claims by an idle capsule").isZero();
    assertThat(engine.listenerState()).isEqualTo(ListenerState.DELIVERING);
    Measurements.record(
        "idle listener: statements in 3 s at probe-interval 500 ms", listenerStatements);
    Measurements.record(
        "idle listener at the default probe-interval ("
            + ListenerConfig.PROBE_INTERVAL.fallback().toSeconds()
            + " s): statements/s",
        String.format(
            java.util.Locale.ROOT,
            "%.4f",
            1.0 / ListenerConfig.PROBE_INTERVAL.fallback().toSeconds()));
  }

  @Test
  void aSilentlyDeadConnectionIsReplacedWithinAProbeCycleAndTheJobOfThePartitionRuns() {
    Duration probeInterval = Duration.ofSeconds(1);
    Duration probeTimeout = Duration.ofMillis(500);
    var m =
        java.util.regex.Pattern.compile("jdbc:postgresql://([^:/?]+)(?::(\\d+))?/([^?]*)(\\?.*)?")
            .matcher(db.jdbcUrl());
    assertThat(m.matches()).as("test database URL " + db.jdbcUrl()).isTrue();
    try (TcpProxy proxy =
        TcpProxy.to(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)))) {
      String viaProxy =
          "jdbc:postgresql://127.0.0.1:"
              + proxy.port()
              + "/"
              + m.group(3)
              + (m.group(4) == null ? "" : m.group(4));
      Engine engine =
          engines.start(
              Engine.builder(
                      engines
                          .config()
                          .capsule("main", 1, "partitioned")
                          .pollInterval(NEVER)
                          .pollCeiling(NEVER)
                          .probeInterval(probeInterval)
                          .probeTimeout(probeTimeout)
                          .build(),
                      db.dataSource())
                  .listenerConnections(() -> java.sql.DriverManager.getConnection(viaProxy))
                  .events(events)
                  .jobs((job, tx) -> Outcome.complete()));
      TestEngines.awaitDelivering(engine);
      // The start-up poll and claim (and the connect's synthetic wake) must be over before the
      // enqueue, or one of them finds the job the partition hides: seen on a loaded machine.
      awaitStartUpDone(engine);
      awaitNoPollOrClaimFor(engine, Duration.ofMillis(500));
      Notifier notifier = engine.notifier();

      long cut = System.nanoTime();
      proxy.partition();
      long lost = jobs.enqueue("partitioned"); // its NOTIFY is swallowed by the partition
      Await.until(
          "the listener to notice the dead connection",
          Duration.ofSeconds(10),
          notifier::state,
          s -> !s.delivering());
      Duration toNotice = Measurements.since(cut);
      assertThat(db.job(lost).state()).as("nobody heard of it").isEqualTo("available");

      long healed = System.nanoTime();
      proxy.heal();
      TestEngines.awaitDelivering(engine);
      Duration toDelivering = Measurements.since(healed);
      events.awaitFinished(lost, 1, Duration.ofSeconds(10));

      // The next probe goes out within one probe interval and its statement times out after the
      // network timeout (the probe timeout, at least 1 s).
      Duration bound =
          probeInterval
              .plusMillis(Notifier.networkTimeoutMs(engine.config().listener()))
              .plusSeconds(2);
      assertThat(toNotice).as("partition -> not delivering").isLessThan(bound);
      assertThat(db.job(lost).state()).isEqualTo("completed");
      Measurements.record(
          "silent partition (probe 1 s, probe timeout 500 ms): cut -> not delivering", toNotice);
      Measurements.record("silent partition: heal -> delivering", toDelivering);
    }
  }

  private long terminateListener() {
    return db.queryLong(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            + " WHERE application_name = ? AND datname = current_database()",
        Channels.LISTENER_APPLICATION_NAME);
  }

  /**
   * Waits for what every start does once: the first poll and each capsule's first claim. The
   * reconnect's synthetic wake may still add one poll.
   */
  private static void awaitStartUpDone(Engine engine) {
    Await.until(
        "the start-up poll and claims",
        Duration.ofSeconds(10),
        () ->
            engine.status().ticks() >= 1
                && engine.capsules().stream().allMatch(c -> c.status().claims() >= 1));
  }

  /** Waits until a whole {@code quiet} window passes without a poll or a claim statement. */
  private static void awaitNoPollOrClaimFor(Engine engine, Duration quiet) {
    Await.until(
        "a quiet " + quiet.toMillis() + " ms without polls or claims",
        Duration.ofSeconds(20),
        () -> {
          long before = activity(engine);
          try {
            Thread.sleep(quiet.toMillis());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
          return activity(engine) == before;
        });
  }

  private static long activity(Engine engine) {
    return engine.status().ticks()
        + engine.status().capsules().stream().mapToLong(EngineStatus.CapsuleStatus::claims).sum();
  }

  /** Polls issued during an observation window (a negative check needs a window). */
  private static long pollsDuring(Engine engine, Duration window) throws InterruptedException {
    long before = engine.status().ticks();
    Thread.sleep(window.toMillis());
    return engine.status().ticks() - before;
  }
}

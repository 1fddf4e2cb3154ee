package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.FaultyDataSource;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every engine loop stops the same way ({@link Loop}): before it started, twice, while it sleeps
 * idle, and while it backs off after a failed round, each at once. "At once" is {@link #AT_ONCE};
 * only a connected listener may take up to its receive timeout more, since only its own thread may
 * touch its connection.
 */
class LoopStopTest {

  private static final Duration AT_ONCE = Duration.ofMillis(100);

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final List<Loop> loops = new CopyOnWriteArrayList<>();
  private final AtomicInteger failures = new AtomicInteger();

  /** Runs each loop on a thread of its own, as Engine.Builder#loopThreads does. */
  private final Executor ownThreads =
      task -> {
        Thread t = new Thread(task, "loop-under-test");
        t.setDaemon(true);
        threads.add(t);
        t.start();
      };

  /** Every engine loop, and how to tell that it has done its first round. */
  enum Kind {
    NOTIFIER(1, Notifier.class),
    CAPSULE(5, Capsule.class),
    TICKER(5, Ticker.class),
    SENDER(1, WakeSender.class),
    ELECTOR(1, Elector.class),
    MAINTAINER(1, Maintainer.class);

    /**
     * How many failed rounds make a backoff long enough that sleeping through a stop would show:
     * capsules and tickers start at 100 ms and double, so the fifth waits at least 800 ms.
     */
    final int failuresBeforeALongBackoff;

    final Class<? extends Loop> type;

    Kind(int failuresBeforeALongBackoff, Class<? extends Loop> type) {
      this.failuresBeforeALongBackoff = failuresBeforeALongBackoff;
      this.type = type;
    }
  }

  @AfterEach
  void stopEverything() {
    loops.forEach(l -> l.stop(Duration.ofSeconds(5)));
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aLoopStoppedBeforeItStartedNeverRuns(Kind kind) {
    Loop loop = loop(kind, false);

    assertStopsWithin(AT_ONCE, loop);
    loop.start(ownThreads);

    assertThat(threads).as("threads started for a stopped " + kind).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void stoppingALoopTwiceIsHarmless(Kind kind) throws InterruptedException {
    Loop loop = loop(kind, false);
    loop.start(ownThreads);
    loop.start(ownThreads);
    assertThat(threads).as("threads of a loop started twice").hasSize(1);

    assertThat(loop.stop(Duration.ofSeconds(5))).as("the first stop").isTrue();
    assertStopsWithin(AT_ONCE, loop);
    threads.get(0).join(1_000);
    assertThat(threads.get(0).isAlive()).as("the loop's thread is alive").isFalse();
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aStopWakesALoopThatSleepsIdle(Kind kind) {
    Loop loop = loop(kind, false);
    loop.start(ownThreads);
    Duration bound = AT_ONCE;
    if (loop instanceof Notifier notifier) {
      // Idle, a listener waits on its socket, never longer than the receive timeout.
      Await.until(
          "the listener to deliver",
          Duration.ofSeconds(10),
          notifier::state,
          s -> s == ListenerState.DELIVERING);
      bound = bound.plusMillis(Notifier.RECEIVE_TIMEOUT_MS);
    } else if (loop instanceof Elector) {
      // A stopping elector that leads resigns: its stop includes that one DELETE, a database
      // round trip that the full suite's parallel load can stretch past 100 ms.
      awaitSleeping(kind, loop, l -> didARound(l));
      bound = bound.plusMillis(400);
    } else {
      awaitSleeping(kind, loop, l -> didARound(l));
    }

    assertStopsWithin(bound, loop);
  }

  @ParameterizedTest
  @EnumSource(Kind.class)
  void aStopCutsAnErrorBackoffShort(Kind kind) {
    Loop loop = loop(kind, true);
    loop.start(ownThreads);
    awaitSleeping(kind, loop, l -> failures.get() >= kind.failuresBeforeALongBackoff);

    assertStopsWithin(AT_ONCE, loop);
  }

  /**
   * A loop of {@code kind}, as the engine builds it, with long backoffs and waits (the defaults,
   * and a listener that waits 10 s to reconnect); in an {@code outage}, every connection it asks
   * for fails. The maintainer, which maintains only on the leader, is made to lead.
   */
  private Loop loop(Kind kind, boolean outage) {
    DataSource dataSource =
        outage ? FaultyDataSource.from(db.dataSource(), Loop.class, this::fail) : db.dataSource();
    EngineConfig config =
        engines
            .config()
            .capsule("main", 1, "loopstop")
            .reconnectMin(Duration.ofSeconds(10))
            .reconnectMax(Duration.ofSeconds(10))
            .build();
    Loop loop;
    if (kind == Kind.MAINTAINER) {
      loop =
          new Maintainer(
              dataSource,
              new JobStore(),
              config.maintainer(),
              config.retention(),
              () -> true,
              null,
              config.execution().heartbeatTtl().dividedBy(3),
              config.execution().nothingToRescueFor());
    } else {
      ListenerConnections listener =
          outage
              ? () -> {
                fail();
                return null;
              }
              : engines.listenerConnections();
      Engine engine = Engine.builder(config, dataSource).listenerConnections(listener).build();
      loop = engine.allLoops().stream().filter(kind.type::isInstance).findFirst().orElseThrow();
      if (loop instanceof WakeSender sender) {
        sender.send(new Wake(Set.of("loopstop"), Map.of(), false)); // its round: one send
      }
    }
    loops.add(loop);
    return loop;
  }

  private void fail() throws SQLException {
    failures.incrementAndGet();
    throw new SQLException("simulated outage for LoopStopTest", "08001");
  }

  private static boolean didARound(Loop loop) {
    if (loop instanceof Capsule c) {
      return c.status().claims() > 0;
    }
    if (loop instanceof Ticker p) {
      return p.ticks() > 0;
    }
    if (loop instanceof WakeSender s) {
      return s.statements() > 0;
    }
    if (loop instanceof Elector e) {
      return e.isLeader();
    }
    return loop instanceof Maintainer m && m.rounds() > 0;
  }

  /**
   * Waits until {@code ready} holds and then the loop's thread sleeps: its latest, since a round
   * that lost its connection moves the loop to a fresh one (Loop.run).
   */
  private void awaitSleeping(Kind kind, Loop loop, Predicate<Loop> ready) {
    Await.until(
        "the " + kind + " loop to sleep",
        Duration.ofSeconds(20),
        () ->
            ready.test(loop)
                && threads.get(threads.size() - 1).getState() == Thread.State.TIMED_WAITING);
  }

  private static void assertStopsWithin(Duration bound, Loop loop) {
    long start = System.nanoTime();
    boolean ended = loop.stop(Duration.ofSeconds(5));
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(ended).as("the loop ended").isTrue();
    assertThat(took).as("how long the stop took").isLessThanOrEqualTo(bound);
  }
}

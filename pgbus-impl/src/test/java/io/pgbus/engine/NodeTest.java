package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.NodeStore.Node;
import io.pgbus.engine.NodeStore.NodeCapsule;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.FaultyDataSource;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** pgbus.node: one row per engine, written at start, on listener changes and at stop only. */
class NodeTest {

  private static final Duration DAY = Duration.ofDays(1);

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void twoEnginesOnOneDatabaseAreBothListedWithTheirCapsules() {
    Engine a = engines.start(engines.config().capsule("a", 2, "qa").build(), this::complete);
    Engine b = engines.start(engines.config().capsule("b", 3, "qb", "qc").build(), this::complete);
    TestEngines.awaitDelivering(a);
    TestEngines.awaitDelivering(b);

    Node nodeA = awaitNode(a, n -> n.connected() && n.listener().equals("delivering"));
    Node nodeB = awaitNode(b, n -> n.connected() && n.listener().equals("delivering"));

    assertThat(nodeA.mode()).isEqualTo("notify");
    assertThat(nodeA.capsules()).containsExactly(new NodeCapsule("a", List.of("qa"), 2));
    assertThat(nodeB.capsules()).containsExactly(new NodeCapsule("b", List.of("qb", "qc"), 3));
    assertThat(nodeA.pid()).isEqualTo(ProcessHandle.current().pid());
    assertThat(nodeA.host()).isNotBlank();
  }

  @Test
  void aNodeRowWithMalformedCapsulesStopsNoFleetRead() throws SQLException {
    // pgbus.node is writable by SQL: rows whose capsules are not what an engine writes (not an
    // array; a capsule whose queues are not an array and whose concurrency is not a number).
    String insert =
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " capsules) VALUES (?, 'h', 1, now(), now(), 'delivering', 'notify', ?::jsonb)";
    db.update(insert, "bad-object", "{\"name\":\"x\"}");
    db.update(insert, "bad-fields", "[{\"name\":\"x\",\"queues\":\"q\",\"concurrency\":\"many\"}]");
    db.update(insert, "good", "[{\"name\":\"g\",\"queues\":[\"qg\"],\"concurrency\":2}]");
    try {
      List<Node> nodes;
      try (Connection c = db.connect()) {
        nodes = new NodeStore().nodes(c, DAY);
      }
      assertThat(nodes).extracting(Node::workerId).contains("bad-object", "bad-fields", "good");
      for (Node n : nodes) {
        if (n.workerId().startsWith("bad-")) {
          assertThat(n.capsules()).as("a malformed row is listed without capsules").isEmpty();
        }
        if (n.workerId().equals("good")) {
          assertThat(n.capsules()).containsExactly(new NodeCapsule("g", List.of("qg"), 2));
        }
      }
    } finally {
      db.update("DELETE FROM pgbus.node WHERE worker_id IN ('bad-object', 'bad-fields', 'good')");
    }
  }

  @Test
  void aStoppedEnginesRowIsGone() throws SQLException {
    Engine e = engines.start(engines.config().capsule("c", 1, "qs").build(), this::complete);
    awaitNode(e, n -> true);

    e.stop();

    assertThat(node(e)).isEmpty();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.node WHERE worker_id = ?", worker(e)))
        .isZero();
  }

  @Test
  void aListenerStateChangeUpdatesTheRow() throws SQLException {
    Engine e = engines.start(engines.config().capsule("c", 1, "ql").build(), this::complete);
    TestEngines.awaitDelivering(e);
    Node before = awaitNode(e, n -> n.connected() && n.listener().equals("delivering"));
    int oldPid = e.notifier().backendPid();

    db.queryLong("SELECT count(pg_terminate_backend(?))", oldPid);

    // The listener goes RECONNECTING, then DELIVERING on a new backend: each change is written.
    Node after =
        awaitNode(
            e,
            n ->
                n.connected()
                    && n.listener().equals("delivering")
                    && n.seenAt().isAfter(before.seenAt()));
    assertThat(e.notifier().backendPid()).isNotEqualTo(oldPid);
    assertThat(after.startedAt()).isEqualTo(before.startedAt());
  }

  @Test
  void aRowWhoseListenerBackendIsGoneIsNotConnectedAndIsDroppedAfterADay() throws SQLException {
    // A JVM that died without stopping: its row names a backend that is no listener (this one).
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " listener_pid) VALUES ('dead-1', 'h', 1, now(), now(), 'delivering', 'notify',"
            + " pg_backend_pid()), ('dead-2', 'h', 2, now() - interval '3 days',"
            + " now() - interval '2 days', 'delivering', 'notify', 1)");
    try (Connection c = db.connect()) {
      List<Node> nodes = new NodeStore().nodes(c, DAY);
      assertThat(nodes)
          .filteredOn(n -> n.workerId().equals("dead-1"))
          .singleElement()
          .satisfies(n -> assertThat(n.connected()).isFalse());
      assertThat(nodes).noneMatch(n -> n.workerId().equals("dead-2"));
    } finally {
      db.update("DELETE FROM pgbus.node WHERE worker_id LIKE 'dead-%'");
    }
  }

  @Test
  void aNodeIsAliveWhileItsHeartbeatIsYoungerThanItsTtlOrItListensAndStaleOtherwise()
      throws SQLException {
    Engine live = engines.start(engines.config().capsule("c", 1, "qa2").build(), this::complete);
    TestEngines.awaitDelivering(live);
    // Not connected (listener_pid is no listener backend): only the heartbeat speaks for them.
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " listener_pid, heartbeat_ttl_ms) VALUES"
            + " ('beat-fresh', 'h', 1, now(), now() - interval '10 seconds', 'delivering',"
            + " 'notify', 1, 30000),"
            + " ('beat-stale', 'h', 2, now(), now() - interval '40 seconds', 'delivering',"
            + " 'notify', 1, 30000),"
            + " ('beat-none', 'h', 3, now(), now(), 'delivering', 'notify', 1, NULL)");
    try {
      Node self = awaitNode(live, Node::connected);
      assertThat(self.alive()).as("a connected engine").isTrue();
      assertThat(self.heartbeatTtl()).isEqualTo(live.config().execution().heartbeatTtl());
      try (Connection c = db.connect()) {
        List<Node> nodes = new NodeStore().nodes(c, DAY);
        assertThat(nodes)
            .filteredOn(n -> n.workerId().startsWith("beat-"))
            .extracting(Node::workerId, Node::beating, Node::alive, Node::heartbeatTtl)
            .containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple(
                    "beat-fresh", true, true, Duration.ofSeconds(30)),
                org.assertj.core.groups.Tuple.tuple(
                    "beat-stale", false, false, Duration.ofSeconds(30)),
                org.assertj.core.groups.Tuple.tuple("beat-none", false, false, null));
      }
    } finally {
      db.update("DELETE FROM pgbus.node WHERE worker_id LIKE 'beat-%'");
    }
  }

  @Test
  void theLeaderPrunesRowsNotSeenForAnHourOrTenOfTheirTtlsIfLonger() throws SQLException {
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " listener_pid, heartbeat_ttl_ms) VALUES"
            + " ('prune-gone', 'h', 1, now() - interval '3 hours', now() - interval '61 minutes',"
            + " 'delivering', 'notify', 1, 30000),"
            + " ('prune-gone-old', 'h', 2, now() - interval '3 hours', now() - interval '2 hours',"
            + " 'delivering', 'notify', 1, NULL),"
            + " ('prune-kept-recent', 'h', 3, now() - interval '3 hours',"
            + " now() - interval '59 minutes', 'delivering', 'notify', 1, 30000),"
            + " ('prune-kept-long-ttl', 'h', 4, now() - interval '3 hours',"
            + " now() - interval '2 hours', 'delivering', 'notify', 1, 900000)");
    try {
      Engine leader =
          engines.start(
              engines.config().capsule("c", 1, "qp").pruneInterval(Duration.ofMillis(200)).build(),
              this::complete);
      Await.until("a leader", Duration.ofSeconds(10), leader::leader, b -> b);
      Await.until(
          "the dead JVMs' rows to be pruned",
          Duration.ofSeconds(20),
          () ->
              db.queryLong(
                  "SELECT count(*) FROM pgbus.node WHERE worker_id IN ('prune-gone',"
                      + " 'prune-gone-old')"),
          n -> n == 0L);
      // Seen 59 minutes ago; and seen 2 hours ago with a TTL of 15 minutes (10 TTLs: 2.5 hours).
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.node WHERE worker_id IN ('prune-kept-recent',"
                      + " 'prune-kept-long-ttl')"))
          .isEqualTo(2);
      assertThat(node(leader)).as("the leader's own row").isPresent();
    } finally {
      db.update("DELETE FROM pgbus.node WHERE worker_id LIKE 'prune-%'");
    }
  }

  @Test
  void anIdleEngineWritesNothingForItsRow() throws Exception {
    var writes = new AtomicInteger();
    DataSource counting =
        FaultyDataSource.from(db.dataSource(), NodeReporter.class, writes::incrementAndGet);
    Engine e =
        engines.start(
            Engine.builder(engines.config().capsule("c", 1, "qi").build(), counting)
                .listenerConnections(engines.listenerConnections())
                .jobs(this::complete));
    TestEngines.awaitDelivering(e);
    awaitNode(e, n -> n.listener().equals("delivering"));
    // The first tick beats (renews seen_at). The listener can reach DELIVERING on its own probe
    // before the ticker's thread has run at all on a loaded machine (CI, 2 cores), so the window
    // opens only after that tick committed: beats after it are a heartbeat interval apart.
    Await.until("the first tick", Duration.ofSeconds(10), () -> e.status().ticks(), t -> t >= 1);
    int writesBefore = writes.get();
    long xminBefore = xmin(e);

    Thread.sleep(3_000); // an idle window: nothing may be written in it

    assertThat(e.listenerState()).isEqualTo(ListenerState.DELIVERING);
    assertThat(writes.get()).as("node writes while idle").isEqualTo(writesBefore);
    assertThat(xmin(e)).as("the row's version").isEqualTo(xminBefore);
  }

  @Test
  void aDatabaseErrorWritingTheRowNeverStopsTheEngine() throws SQLException {
    DataSource failing =
        FaultyDataSource.from(
            db.dataSource(),
            NodeReporter.class,
            () -> {
              throw new SQLException("node table unreachable (test)", "08006");
            });
    Engine e =
        engines.start(
            Engine.builder(engines.config().capsule("c", 1, "qe").build(), failing)
                .listenerConnections(engines.listenerConnections())
                .jobs(this::complete));
    TestEngines.awaitDelivering(e);

    long id = JobFixtures.in(db).enqueue("qe");

    Await.until(
        "the job to complete",
        Duration.ofSeconds(10),
        () -> db.job(id).state(),
        s -> s.equals("completed"));
    assertThat(e.running()).isTrue();
    assertThat(node(e)).isEmpty();
  }

  private Outcome complete(RunningJob job, Connection c) {
    return Outcome.complete();
  }

  private static String worker(Engine e) {
    return e.config().workerId();
  }

  private static long xmin(Engine e) {
    return db.queryLong("SELECT xmin::text::bigint FROM pgbus.node WHERE worker_id = ?", worker(e));
  }

  private static Optional<Node> node(Engine e) throws SQLException {
    try (Connection c = db.connect()) {
      return new NodeStore()
          .nodes(c, DAY).stream().filter(n -> n.workerId().equals(worker(e))).findFirst();
    }
  }

  private static Node awaitNode(Engine e, java.util.function.Predicate<Node> accept) {
    return Await.until(
            "the node row of " + worker(e),
            Duration.ofSeconds(10),
            () -> node(e),
            n -> n.isPresent() && accept.test(n.get()))
        .orElseThrow();
  }
}

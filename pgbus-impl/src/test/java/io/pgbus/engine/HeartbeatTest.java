package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * JVM heartbeats (pgbus.tick, V13): a running job is kept alive by its JVM's beats however long it
 * runs, and the running jobs of a node that stopped beating are rescued without waiting for their
 * leases, while a worker without a beating row keeps the lease alone.
 */
class HeartbeatTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  // Beats every 500 ms (a third of the lease), each renewing the lease to 1.5 s from then.
  private static final Duration LEASE = Duration.ofMillis(1500);
  private static final Duration TTL = Duration.ofSeconds(3);

  @Test
  void aJobRunningTwentyTimesTheLeaseStaysRunningIsClaimedOnceAndCompletesOnce() throws Exception {
    // Leftovers of the other tests here (a stale node's running job) would be rescued too.
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.node");
    Duration runFor = LEASE.multipliedBy(20);
    Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    List<Engine> fleet =
        List.of(
            engines.start(config("long").build(), (job, tx) -> run(job, runs, runFor)),
            engines.start(config("long").build(), (job, tx) -> run(job, runs, runFor)));
    Await.until("a leader", Duration.ofSeconds(10), () -> fleet.stream().anyMatch(Engine::leader));
    long id = JobFixtures.in(db).enqueue("long");

    Await.until("the job to start", Duration.ofSeconds(10), () -> runs.containsKey(id));
    long started = System.nanoTime();
    // While it runs, it stays running, on its first attempt, and its lease keeps moving ahead.
    while (Measurements.since(started).compareTo(runFor.minusSeconds(2)) < 0) {
      JobRow row = db.job(id);
      assertThat(row.state())
          .as(
              "after %s (ticks %s, alive %s, row %s, node %s)",
              Measurements.since(started),
              fleet.stream().map(e -> e.status().ticks()).toList(),
              fleet.stream().map(e -> e.jobsAliveForTest().size()).toList(),
              row,
              db.queryLongs(
                  "SELECT (extract(epoch FROM now() - seen_at) * 1000)::bigint FROM pgbus.node"
                      + " ORDER BY worker_id"))
          .isEqualTo("running");
      assertThat(row.attempt()).isEqualTo(1);
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.job WHERE id = ? AND lease_expires_at > now()", id))
          .as(
              "the lease is live after %s (ticks %s, alive %s, row %s)",
              Measurements.since(started),
              fleet.stream().map(e -> e.status().ticks()).toList(),
              fleet.stream().map(e -> e.jobsAliveForTest().size()).toList(),
              row)
          .isEqualTo(1);
      Thread.sleep(200);
    }
    Await.until(
        "the job to complete",
        runFor.plusSeconds(10),
        () -> db.job(id).state(),
        s -> s.equals("completed"));
    JobRow done = db.job(id);
    assertThat(done.attempt()).isEqualTo(1);
    assertThat(done.errors()).isEmpty();
    assertThat(runs.get(id).get()).as("handler runs").isEqualTo(1);
    assertThat(fleet.stream().mapToLong(e -> e.status().rescued()).sum()).isZero();
    Measurements.record(
        "heartbeat: a job of 20 x the lease (lease 1.5 s, heartbeat TTL 3 s) ran to completion on"
            + " attempt 1",
        Measurements.since(started));
  }

  @Test
  void theRunningJobsOfANodeThatStoppedBeatingAreRescuedOthersKeepTheirLeases() throws Exception {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.node");
    var fixtures = JobFixtures.in(db);
    var store = new JobStore();
    long dead = fixtures.enqueue("hb");
    long fresh = fixtures.enqueue("hb");
    long justClaimed = fixtures.enqueue("hb");
    long noTtl = fixtures.enqueue("hb");
    long noNode = fixtures.enqueue("hb");
    Duration longAgo = Duration.ofMinutes(10);
    try (Connection c = db.connect()) {
      c.setAutoCommit(true);
      node("dead-jvm", 30_000, longAgo);
      node("live-jvm", 30_000, Duration.ZERO);
      node("idle-jvm", 30_000, longAgo);
      node("old-jvm", null, longAgo);
      claim(c, store, dead, "dead-jvm", longAgo);
      claim(c, store, fresh, "live-jvm", longAgo);
      // Claimed a moment ago by a JVM that was idle for a while: its beat is on its way.
      claim(c, store, justClaimed, "idle-jvm", Duration.ZERO);
      claim(c, store, noTtl, "old-jvm", longAgo);
      claim(c, store, noNode, "test-kit-runner", longAgo);
      db.update("UPDATE pgbus.node SET seen_at = now() WHERE worker_id = 'live-jvm'");

      Map<String, Long> rescued = store.jobRescueExpired(c, 100);

      assertThat(rescued).containsExactly(Map.entry("hb", 1L));
    }
    JobRow row = db.job(dead);
    assertThat(row.state()).isEqualTo("retryable");
    assertThat(row.errors())
        .singleElement()
        .satisfies(e -> assertThat(e.error()).contains("heartbeat lost", "dead-jvm"));
    for (long id : List.of(fresh, justClaimed, noTtl, noNode)) {
      assertThat(db.job(id).state()).as("job %d", id).isEqualTo("running");
    }
  }

  @Test
  void theTickNeverWaitsForAHeldJobsRowThatAnotherTransactionHasLocked() throws Exception {
    // A worker's transaction finishing a group of jobs holds their rows; a tick that waited for
    // them could deadlock with it (each holding a row the other wants). It skips them instead.
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.node");
    JobFixtures fixtures = JobFixtures.in(db);
    fixtures.enqueue("skip");
    fixtures.enqueue("skip");
    node("beater", 3_000, Duration.ofSeconds(5));
    try (Connection c = db.connect();
        Connection worker = db.connect()) {
      c.setAutoCommit(true);
      List<ClaimedJob> held =
          new JobStore().jobClaim(c, List.of("skip"), 2, "beater", Duration.ofSeconds(1));
      assertThat(held).hasSize(2);
      worker.setAutoCommit(false);
      try (var ps = worker.prepareStatement("SELECT 1 FROM pgbus.job WHERE id = ? FOR UPDATE")) {
        ps.setLong(1, held.get(1).id());
        ps.executeQuery().close();
      }
      try (var st = c.createStatement()) {
        st.execute("SET statement_timeout = '5s'");
      }
      NodeStore.Tick tick =
          new NodeStore()
              .nodeTick(c, List.of(), "beater", true, held, Duration.ofHours(1), null, null, null);
      assertThat(tick.renewed())
          .as("the unlocked one renewed, the locked one skipped")
          .isEqualTo(1);
      worker.rollback();
      tick =
          new NodeStore()
              .nodeTick(c, List.of(), "beater", true, held, Duration.ofHours(1), null, null, null);
      assertThat(tick.renewed()).as("both, once the row is free").isEqualTo(2);
    }
  }

  @Test
  void theTickRenewsOnlyTheLeasesOfTheAttemptsItNames() throws Exception {
    db.update("DELETE FROM pgbus.job");
    db.update("DELETE FROM pgbus.node");
    long id = JobFixtures.in(db).enqueue("renew");
    node("beater", 3_000, Duration.ofSeconds(5));
    try (Connection c = db.connect()) {
      c.setAutoCommit(true);
      List<ClaimedJob> held =
          new JobStore().jobClaim(c, List.of("renew"), 1, "beater", Duration.ofSeconds(1));
      ClaimedJob job = held.get(0);
      ClaimedJob stale =
          new ClaimedJob(
              job.id(),
              job.queue(),
              job.priority(),
              job.payload(),
              job.attempt() + 1,
              job.maxAttempts(),
              job.createdAt(),
              job.runAt());
      var nodes = new NodeStore();

      NodeStore.Tick other =
          nodes.nodeTick(
              c, List.of(), "beater", true, List.of(stale), Duration.ofHours(1), null, null, null);
      assertThat(other.renewed()).as("another attempt's fence").isZero();
      assertThat(other.nodeFound()).isTrue();
      NodeStore.Tick mine =
          nodes.nodeTick(
              c, List.of(), "beater", true, List.of(job), Duration.ofHours(1), null, null, null);
      assertThat(mine.renewed()).isEqualTo(1);
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.job WHERE id = ? AND lease_expires_at > now() +"
                      + " interval '59 minutes'",
                  id))
          .isEqualTo(1);
      assertThat(
              db.queryLong(
                  "SELECT count(*) FROM pgbus.node WHERE worker_id = 'beater'"
                      + " AND seen_at > now() - interval '30 seconds'"))
          .isEqualTo(1);
      NodeStore.Tick gone =
          nodes.nodeTick(
              c, List.of(), "nobody", true, List.of(), Duration.ofHours(1), null, null, null);
      assertThat(gone.nodeFound()).as("a node without a row").isFalse();
    }
  }

  private EngineConfig.Builder config(String queue) {
    return engines
        .config()
        .capsule("main", 1, queue)
        .lease(LEASE)
        .jobTimeout(Duration.ofMinutes(5))
        .set(ExecutionConfig.HEARTBEAT_TTL, TTL)
        .leaderTtl(Duration.ofSeconds(2))
        .rescueInterval(Duration.ofMillis(200));
  }

  private static Outcome run(ClaimedJob job, Map<Long, AtomicInteger> runs, Duration d)
      throws InterruptedException {
    runs.computeIfAbsent(job.id(), k -> new AtomicInteger()).incrementAndGet();
    Thread.sleep(d.toMillis()); // the subject: a handler that takes 20 leases
    return Outcome.complete();
  }

  private static void node(String worker, Integer ttlMs, Duration seenAgo) {
    db.update(
        "INSERT INTO pgbus.node (worker_id, host, pid, started_at, seen_at, listener, mode,"
            + " heartbeat_ttl_ms) VALUES (?, 'h', 1, now(), now() - ?::float8 * interval '1"
            + " millisecond', 'delivering', 'notify', ?)",
        worker,
        (double) seenAgo.toMillis(),
        ttlMs);
  }

  private static void claim(
      Connection c, JobStore store, long id, String worker, Duration claimedAgo) throws Exception {
    List<ClaimedJob> got = store.jobClaim(c, List.of("hb"), 1, worker, Duration.ofHours(1));
    assertThat(got).extracting(ClaimedJob::id).containsExactly(id);
    db.update(
        "UPDATE pgbus.job SET attempted_at = now() - ?::float8 * interval '1 millisecond'"
            + " WHERE id = ?",
        (double) claimedAgo.toMillis(),
        id);
  }
}

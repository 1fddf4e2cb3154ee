package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every engine on one database takes part in one election: exactly one leads, only the leader runs
 * maintenance, and when the leader goes away another leads within one TTL.
 */
class LeaderElectionTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration TTL = Duration.ofSeconds(3);
  // A follower hears of a free lease from its poll's tick (Elector): a dead leader is replaced
  // within 3/4 of the TTL plus the poll ceiling.
  private static final Duration CEILING = Duration.ofMillis(500);

  @Test
  void threeEnginesElectExactlyOneLeaderAndOnlyItMaintains() throws Exception {
    List<Engine> fleet = fleet(3);
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    // Let the followers take a few looks at the lease and the leader a few rounds.
    Thread.sleep(TTL.toMillis());

    assertThat(leaders(fleet)).isEqualTo(1);
    for (Engine e : fleet) {
      if (e.leader()) {
        assertThat(e.status().maintenanceRounds()).as("the leader maintains").isPositive();
      } else {
        assertThat(e.status().maintenanceRounds()).as("a follower never maintains").isZero();
      }
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.leader")).isEqualTo(1);
  }

  @Test
  void aLeaseWrittenBySqlToNeverEndStopsNoTickAndNoElection() throws Exception {
    // What a row from before V23's CHECK (or a superuser past it) can hold: a lease of no elector
    // that never ends. It used to fail every JVM's tick and keep every JVM from leading.
    db.update("DELETE FROM pgbus.leader");
    db.update("ALTER TABLE pgbus.leader DROP CONSTRAINT leader_expires_chk");
    try {
      db.update(
          "INSERT INTO pgbus.leader (name, holder, expires_at) VALUES (?, 'forged', 'infinity')",
          Elector.MAINTENANCE);
    } finally {
      db.update(
          "ALTER TABLE pgbus.leader ADD CONSTRAINT leader_expires_chk CHECK (expires_at"
              + " OPERATOR(pg_catalog.<=) (pg_catalog.now() OPERATOR(pg_catalog.+) interval '1"
              + " hour')) NOT VALID");
    }
    List<Engine> fleet = fleet(2);
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    Await.until(
        "ticks on every engine",
        Duration.ofSeconds(10),
        () -> fleet.stream().mapToLong(e -> e.status().ticks()).min().orElse(0),
        n -> n >= 2);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.leader WHERE holder = 'forged'")).isZero();

    // And the table refuses such a lease now, naming its rule.
    assertThatThrownBy(() -> db.update("UPDATE pgbus.leader SET expires_at = 'infinity'"))
        .hasStackTraceContaining("leader_expires_chk");
  }

  @Test
  void whenTheLeaderDiesAnotherLeadsWithinItsLeasePlusOnePollCeiling() throws Exception {
    List<Engine> fleet = fleet(2);
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    Engine leader = fleet.stream().filter(Engine::leader).findFirst().orElseThrow();
    Engine follower = fleet.stream().filter(e -> !e.leader()).findFirst().orElseThrow();

    // A crash: the lease is not given up, it just stops being renewed.
    String holder = leader.config().workerId();
    leader.stop();
    try (Connection c = db.connect()) {
      // Leave the lease as a leader that had just renewed would leave it: a stop resigns, a
      // crash does not.
      new LeaderStore().leaderAttemptElect(c, Elector.MAINTENANCE, holder, Elector.lease(TTL));
    }
    long crashed = System.nanoTime();

    Await.until("the follower to lead", TTL.multipliedBy(3), follower::leader, b -> b);
    Duration takeover = Duration.ofNanos(System.nanoTime() - crashed);
    assertThat(takeover)
        .as("takeover time")
        .isLessThanOrEqualTo(Elector.lease(TTL).plus(CEILING).plusMillis(1500));
  }

  @Test
  void aStoppingLeaderResignsSoAnotherLeadsAtOnce() throws Exception {
    List<Engine> fleet = fleet(2);
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    Engine leader = fleet.stream().filter(Engine::leader).findFirst().orElseThrow();
    Engine follower = fleet.stream().filter(e -> !e.leader()).findFirst().orElseThrow();

    leader.stop();

    // The stopped leader holds no lease (the follower may already hold one: it looks at once).
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.leader WHERE holder = ?", leader.config().workerId()))
        .isZero();
    Await.until("the follower to lead", TTL, follower::leader, b -> b);
  }

  @Test
  void aStoppingLeaderNotifiesSoAFollowerLeadsWithinASecondNotAtItsNextTick() throws Exception {
    // A long TTL and poll ceiling: without the resign's NOTIFY the follower would look only at its
    // next tick (up to 30 s) and could not rely on the lease running out (45 s).
    Duration ttl = Duration.ofSeconds(60);
    Duration ceiling = Duration.ofSeconds(30);
    var fleet = new ArrayList<Engine>();
    for (int i = 0; i < 2; i++) {
      fleet.add(
          engines.start(
              engines
                  .builder(
                      engines
                          .config()
                          .capsule("main", 1, "r" + i)
                          .leaderTtl(ttl)
                          .pollInterval(ceiling)
                          .pollCeiling(ceiling)
                          .build())
                  .jobs((job, tx) -> Outcome.complete())));
    }
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    Engine leader = fleet.stream().filter(Engine::leader).findFirst().orElseThrow();
    Engine follower = fleet.stream().filter(e -> !e.leader()).findFirst().orElseThrow();
    TestEngines.awaitDelivering(follower);

    leader.stop();
    long resigned = System.nanoTime();

    Await.until("the follower to lead", Duration.ofSeconds(10), follower::leader, b -> b);
    Duration takeover = Duration.ofNanos(System.nanoTime() - resigned);
    assertThat(takeover)
        .as("takeover after a clean stop (TTL %s, poll ceiling %s)", ttl, ceiling)
        .isLessThan(Duration.ofMillis(2500));
    io.pgbus.engine.testing.Measurements.record(
        "leader takeover after a clean stop (TTL 60 s, ceiling 30 s)", takeover);
  }

  @Test
  void forgedResignNotificationsBringAtMostOneLookASecondAndElectNoOne() throws Exception {
    Duration ttl = Duration.ofSeconds(60);
    Duration ceiling = Duration.ofSeconds(30);
    var fleet = new ArrayList<Engine>();
    for (int i = 0; i < 2; i++) {
      fleet.add(
          engines.start(
              engines
                  .builder(
                      engines
                          .config()
                          .capsule("main", 1, "f" + i)
                          .leaderTtl(ttl)
                          .pollInterval(ceiling)
                          .pollCeiling(ceiling)
                          .build())
                  .jobs((job, tx) -> Outcome.complete())));
    }
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    Engine leader = fleet.stream().filter(Engine::leader).findFirst().orElseThrow();
    Engine follower = fleet.stream().filter(e -> !e.leader()).findFirst().orElseThrow();
    TestEngines.awaitDelivering(follower);
    long before = follower.status().electionStatements();

    long sent = System.nanoTime();
    for (int i = 0; i < 50; i++) {
      db.queryLong("SELECT count(*) FROM pg_notify('pgbus-leader', 'forged')");
    }
    // Notifications arrive in order: once a queue's NOTIFY sent after them was heard, so were they.
    long heard = follower.notifier().notifications();
    db.queryLong("SELECT count(*) FROM pg_notify('pgbus_f0', '')");
    db.queryLong("SELECT count(*) FROM pg_notify('pgbus_f1', '')");
    Await.until(
        "the listener to read past the forged notifications",
        Duration.ofSeconds(10),
        () -> follower.notifier().notifications(),
        n -> n > heard);
    long seconds = 1 + Duration.ofNanos(System.nanoTime() - sent).toSeconds();

    assertThat(follower.status().electionStatements() - before)
        .as("lease reads brought forward by 50 forged notifications in about %s s", seconds)
        .isBetween(1L, seconds + 1);
    assertThat(leader.leader()).as("the leader still leads").isTrue();
    assertThat(follower.leader()).isFalse();
  }

  @Test
  void onlyTheLeaderRescuesExpiredLeases() throws Exception {
    List<Engine> fleet = fleet(2);
    Await.until("a leader", Duration.ofSeconds(10), () -> leaders(fleet), n -> n == 1L);
    long id = JobFixtures.in(db).enqueue("stranded");
    try (Connection c = db.connect()) {
      new JobStore().jobClaim(c, List.of("stranded"), 1, "crashed-jvm", Duration.ofMillis(1));
    }

    Await.until(
        "the stranded job to be rescued",
        Duration.ofSeconds(10),
        () -> db.job(id).state(),
        s -> s.equals("retryable"));
    // The rescuer counts after its statement commits, so the row can change first.
    Await.until(
        "the rescuer to count its rescue",
        Duration.ofSeconds(5),
        () -> fleet.stream().anyMatch(e -> e.status().rescued() > 0),
        b -> b);
    long rescuers = fleet.stream().filter(e -> e.status().rescued() > 0).count();
    assertThat(rescuers).isEqualTo(1);
    assertThat(
            fleet.stream().filter(e -> e.status().rescued() > 0).findFirst().orElseThrow().leader())
        .isTrue();
  }

  @Test
  void aCandidateLooksAgainWhenTheLeaseItSawCanHaveRunOutButAfterHalfATtlAtTheLatest() {
    Duration ttl = Duration.ofSeconds(60);
    // A live leader's lease has 30 to 45 s left: look again after 80-100% of half the TTL.
    for (int i = 0; i < 100; i++) {
      assertThat(Elector.candidateWaitMillis(ttl, 45_000)).isBetween(24_000L, 30_000L);
    }
    // A lease about to run out (its leader stopped renewing): look right after it has.
    assertThat(Elector.candidateWaitMillis(ttl, 2_000)).isEqualTo(2_005L);
    assertThat(Elector.candidateWaitMillis(ttl, 0)).isEqualTo(5L);
  }

  private List<Engine> fleet(int n) {
    var fleet = new ArrayList<Engine>();
    for (int i = 0; i < n; i++) {
      fleet.add(
          engines.start(
              engines
                  .builder(
                      engines
                          .config()
                          .capsule("main", 1, "q" + i)
                          .leaderTtl(TTL)
                          .pollInterval(CEILING)
                          .pollCeiling(CEILING)
                          .rescueInterval(Duration.ofMillis(200))
                          .build())
                  .jobs((job, tx) -> Outcome.complete())));
    }
    return fleet;
  }

  private static long leaders(List<Engine> fleet) {
    return fleet.stream().filter(Engine::leader).count();
  }
}

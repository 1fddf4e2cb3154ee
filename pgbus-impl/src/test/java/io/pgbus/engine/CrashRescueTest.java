package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.ChildJvm;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.JobRow;
import io.pgbus.engine.testing.Measurements;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.PreparedStatement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A worker JVM killed with SIGKILL in the middle of a job, while it is the maintenance leader: its
 * uncommitted writes vanish with its connections, another engine takes over leadership within the
 * leader TTL, rescues the job once its lease expired, and runs it to completion exactly once.
 */
class CrashRescueTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final Duration LEASE = Duration.ofSeconds(3);
  private static final Duration LEADER_TTL = Duration.ofSeconds(2);
  private static final Duration POLL_CEILING = Duration.ofSeconds(1);

  @Test
  void aLeaderKilledMidJobHasItsJobRescuedByTheNextLeaderAndCompletedExactlyOnce()
      throws Exception {
    db.update("CREATE TABLE crash_handled (job_id bigint, attempt int, worker text)");
    long id = JobFixtures.in(db).enqueue("crash");

    try (ChildJvm child =
        ChildJvm.start(
            KillableWorker.class,
            db.jdbcUrl(),
            "crash",
            "doomed-jvm",
            Long.toString(LEASE.toMillis()),
            Long.toString(LEADER_TTL.toMillis()))) {
      child.await("LEADER", Duration.ofSeconds(60));
      child.await("RUNNING " + id + " 1", Duration.ofSeconds(30));

      var events = new RecordingEvents();
      Engine survivor =
          engines.start(
              engines
                  .builder(
                      engines
                          .config()
                          .workerId("survivor")
                          .capsule("main", 1, "crash")
                          .lease(LEASE)
                          .leaderTtl(LEADER_TTL)
                          .rescueInterval(Duration.ofMillis(200))
                          // A follower learns of a free lease from its poll's tick (Elector):
                          // a new leader within 3/4 of the TTL plus the poll ceiling.
                          .pollCeiling(POLL_CEILING)
                          .build())
                  .events(events)
                  .jobs(
                      (job, tx) -> {
                        try (PreparedStatement ps =
                            tx.prepareStatement("INSERT INTO crash_handled VALUES (?, ?, ?)")) {
                          ps.setLong(1, job.id());
                          ps.setInt(2, job.attempt());
                          ps.setString(3, "survivor");
                          ps.executeUpdate();
                        }
                        return Outcome.complete();
                      }));
      assertThat(db.job(id).attemptedBy()).isEqualTo("doomed-jvm");
      assertThat(survivor.leader()).as("the survivor leads while the child lives").isFalse();

      long killed = System.nanoTime();
      assertThat(child.kill9()).as("exit code of a SIGKILLed JVM").isEqualTo(137);

      Await.until("the survivor to lead", Duration.ofSeconds(15), survivor::leader);
      Duration toLeader = Measurements.since(killed);
      Await.until(
          "the job to be rescued", Duration.ofSeconds(20), () -> survivor.status().rescued() == 1);
      Duration toRescued = Measurements.since(killed);
      assertThat(events.awaitFinished(id, 2, Duration.ofSeconds(10)).kind())
          .isEqualTo(Outcome.Kind.COMPLETE);
      Duration toDone = Measurements.since(killed);

      JobRow row = db.job(id);
      assertThat(row.state()).isEqualTo("completed");
      assertThat(row.attempt()).isEqualTo(2);
      assertThat(row.attemptedBy()).isEqualTo("survivor");
      assertThat(row.errors())
          .singleElement()
          .satisfies(e -> assertThat(e.error()).contains("lease expired", "doomed-jvm"));
      assertThat(db.queryLongs("SELECT attempt FROM crash_handled WHERE job_id = ?", id))
          .as("committed handler runs: the killed one rolled back with its connection")
          .containsExactly(2L);
      assertThat(toLeader)
          .as("SIGKILL -> new leader")
          .isLessThan(Elector.lease(LEADER_TTL).plus(POLL_CEILING).plusSeconds(2));
      assertThat(toRescued).as("SIGKILL -> rescued").isLessThan(LEASE.plusSeconds(3));
      Measurements.record("SIGKILL (lease 3 s, leader TTL 2 s): kill -> new leader", toLeader);
      Measurements.record("SIGKILL (lease 3 s, leader TTL 2 s): kill -> job rescued", toRescued);
      Measurements.record("SIGKILL (lease 3 s, leader TTL 2 s): kill -> job completed", toDone);
    }
  }
}

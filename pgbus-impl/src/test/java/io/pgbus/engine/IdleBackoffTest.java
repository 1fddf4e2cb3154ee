package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Maintenance backs off toward ten times its interval while idle and snaps back on progress. */
class IdleBackoffTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void doublesPerIdleRoundUpToTenTimes() {
    var backoff = new IdleBackoff(Duration.ofSeconds(30));
    assertThat(backoff.next(0)).isEqualTo(Duration.ofSeconds(60));
    assertThat(backoff.next(0)).isEqualTo(Duration.ofSeconds(120));
    assertThat(backoff.next(0)).isEqualTo(Duration.ofSeconds(240));
    for (int i = 0; i < 20; i++) {
      backoff.next(0);
    }
    assertThat(backoff.next(0)).isEqualTo(Duration.ofSeconds(300));
    assertThat(backoff.next(5)).as("progress snaps back").isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void anIdleLeaderRunsFarFewerRoundsThanItsBaseRateAndSnapsBackOnWork() throws Exception {
    Duration base = Duration.ofMillis(50);
    Engine engine =
        engines.start(
            engines
                .config()
                .capsule("c", 1, "other")
                .leaderTtl(Duration.ofSeconds(2))
                .rescueInterval(base)
                .pruneInterval(base)
                .build(),
            (job, tx) -> Outcome.complete());
    Await.until("leadership", Duration.ofSeconds(10), engine::leader, b -> b);
    long start = System.nanoTime();
    long roundsAtStart = engine.status().maintenanceRounds();
    Thread.sleep(3_000);
    double seconds = (System.nanoTime() - start) / 1e9;
    long idleRounds = engine.status().maintenanceRounds() - roundsAtStart;
    // Without backoff: 2 tasks x 20 rounds/s. With it, the interval grows 50, 100, 200, 400, 500
    // ms.
    double fullRate = 2 * seconds / 0.05;
    assertThat((double) idleRounds).as("idle rounds in %.1f s", seconds).isLessThan(fullRate / 3);

    long id = JobFixtures.in(db).enqueue("stranded");
    try (Connection c = db.connect()) {
      new JobStore().jobClaim(c, List.of("stranded"), 1, "crashed", Duration.ofMillis(1));
    }
    Await.until(
        "the rescue", Duration.ofSeconds(5), () -> db.job(id).state(), s -> s.equals("retryable"));
  }

  @Test
  void aLostConnectionSendsTheRescueBackToItsBaseInterval() throws Exception {
    var maintainer =
        new Maintainer(
            db.dataSource(),
            new JobStore(),
            new MaintainerConfig(
                Duration.ofMillis(50),
                Duration.ofHours(1),
                Duration.ofMinutes(5),
                Duration.ofDays(7)),
            RetentionConfig.from(SettingSource.DEFAULTS),
            () -> true,
            null,
            Duration.ofHours(1),
            Duration.ofHours(1));
    Thread loop = new Thread(maintainer, "maintainer");
    loop.start();
    try {
      Await.until(
          "the idle rescue to back off fully",
          Duration.ofSeconds(10),
          maintainer::rescueBackoffFactor,
          f -> f == IdleBackoff.MAX_FACTOR);

      maintainer.connectionLost();

      // At most one idle round can have run since (they are 50 ms apart at the base).
      assertThat(maintainer.rescueBackoffFactor()).isLessThanOrEqualTo(2);
    } finally {
      maintainer.stop(Duration.ofSeconds(5));
    }
  }

  @Test
  void onlyConnectionLossesCountAsLostConnections() {
    assertThat(ErrorBackoff.connectionError(new java.sql.SQLException("refused", "08001")))
        .isTrue();
    assertThat(ErrorBackoff.connectionError(new java.sql.SQLException("admin", "57P01"))).isTrue();
    assertThat(ErrorBackoff.connectionError(new java.sql.SQLException("starting up", "57P03")))
        .isTrue();
    assertThat(
            ErrorBackoff.connectionError(
                new IllegalStateException(new java.sql.SQLException("io", "08006"))))
        .as("as a cause")
        .isTrue();
    assertThat(ErrorBackoff.connectionError(new java.sql.SQLException("syntax", "42601")))
        .isFalse();
    assertThat(ErrorBackoff.connectionError(new IllegalStateException("bug"))).isFalse();
  }
}

package io.pgbus.jakarta.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The runnable-now gauge and its complement by cause, as both metrics adapters read them: they move
 * when a queue is paused and resumed, and a scrape within the cache's age reads nothing.
 */
class BlockersCacheTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_pause");

  private final JobFixtures jobs = JobFixtures.in(db);

  @Test
  void runnableNowDropsToZeroWhileTheQueueIsPausedAndComesBackOnResume() {
    var gauge = new BlockersCache(db.dataSource(), List.of("gauged", "quiet"), Duration.ZERO);
    jobs.enqueue("gauged", 3);
    assertThat(gauge.runnableNow("gauged")).isEqualTo(3);
    assertThat(gauge.blocked("gauged", "queue_paused")).isZero();
    assertThat(gauge.runnableNow("quiet")).isZero();

    db.queryLong("SELECT count(*) WHERE pgbus.pause('gauged')");
    assertThat(gauge.runnableNow("gauged")).isZero();
    assertThat(gauge.blocked("gauged", "queue_paused")).isEqualTo(3);

    db.queryLong("SELECT count(*) WHERE pgbus.resume('gauged')");
    assertThat(gauge.runnableNow("gauged")).isEqualTo(3);
    assertThat(gauge.blocked("gauged", "queue_paused")).isZero();
  }

  @Test
  void aScrapeWithinTheMaxAgeReusesTheLastRead() {
    var gauge = new BlockersCache(db.dataSource(), List.of("cached"), Duration.ofHours(1));
    jobs.enqueue("cached", 2);
    assertThat(gauge.runnableNow("cached")).isEqualTo(2);
    jobs.enqueue("cached", 2);
    assertThat(gauge.runnableNow("cached")).isEqualTo(2);
  }
}

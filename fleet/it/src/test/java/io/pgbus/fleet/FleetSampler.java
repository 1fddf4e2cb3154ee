package io.pgbus.fleet;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Watches the fleet from the database while FleetIT works, every 100 ms on one connection: who
 * holds the maintenance lease, how many listener connections the fleet has, how many jobs run and
 * how many are done. Each sample carries the phase the test was in, because what must hold differs:
 * with every server up, exactly one live leader and exactly three listeners; during a failover or a
 * redeploy, fewer.
 */
final class FleetSampler implements AutoCloseable {

  /** What every server up looks like; the other phases are named by the test. */
  static final String ALL_UP = "all-up";

  record Sample(
      long atMillis,
      String phase,
      long liveLeaders,
      String holder,
      String electedAt,
      long listeners,
      long running,
      long completed) {}

  // pg_stat_activity of this database only: other tests on the same PostgreSQL have listeners too.
  private static final String SAMPLE =
      """
      SELECT (SELECT count(*) FROM pgbus.leader WHERE expires_at > now()),
             (SELECT min(holder) FROM pgbus.leader WHERE expires_at > now()),
             (SELECT min(elected_at)::text FROM pgbus.leader WHERE expires_at > now()),
             (SELECT count(*) FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'pgbus-listener'),
             (SELECT count(*) FROM pgbus.job WHERE state = 'running'),
             (SELECT count(*) FROM pgbus.job WHERE state = 'completed')
      """;

  private final FleetDatabase db;
  private final List<Sample> samples = new ArrayList<>();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread;
  private final long start = System.nanoTime();
  private volatile String phase = ALL_UP;
  private volatile Exception failure;

  FleetSampler(FleetDatabase db) {
    this.db = db;
    this.thread = new Thread(this::run, "fleet-sampler");
    this.thread.setDaemon(true);
  }

  FleetSampler start() {
    thread.start();
    return this;
  }

  void phase(String phase) {
    this.phase = phase;
  }

  private void run() {
    try (Connection c = db.connect()) {
      do {
        String p = phase;
        List<Object> r = FleetDatabase.rows(c, SAMPLE).get(0);
        Sample s =
            new Sample(
                (System.nanoTime() - start) / 1_000_000,
                p,
                ((Number) r.get(0)).longValue(),
                (String) r.get(1),
                (String) r.get(2),
                ((Number) r.get(3)).longValue(),
                ((Number) r.get(4)).longValue(),
                ((Number) r.get(5)).longValue());
        synchronized (samples) {
          samples.add(s);
        }
      } while (!stop.await(100, TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (SQLException | RuntimeException e) {
      failure = e;
    }
  }

  List<Sample> samples() {
    if (failure != null) {
      throw new AssertionError("the sampler failed: " + failure, failure);
    }
    synchronized (samples) {
      return List.copyOf(samples);
    }
  }

  @Override
  public void close() {
    stop.countDown();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}

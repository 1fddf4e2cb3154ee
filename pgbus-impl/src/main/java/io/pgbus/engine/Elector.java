package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Elects one maintenance leader among every engine on the same database, with a lease row (see
 * V2__leader.sql). Everyone acts every quarter of the TTL: the leader renews a lease of three
 * quarters of the TTL, and candidates look. When a leader dies, its lease runs out at most three
 * quarters of a TTL later and a candidate sees that within the next quarter: another engine leads
 * within one TTL. A candidate that sees a live leader stops after one plain read: no write and no
 * row lock.
 *
 * <p>A leader that cannot reach the database stops acting as leader once its lease would have
 * expired by its own clock, so two leaders never run maintenance at once for longer than clock
 * drift allows. Maintenance is idempotent (SKIP LOCKED rescue, bounded deletes), so a brief
 * overlap is harmless.
 */
final class Elector implements Runnable {

  static final String MAINTENANCE = "maintenance";

  private static final System.Logger LOG = System.getLogger(Elector.class.getName());

  private final DataSource dataSource;
  private final LeaderStore store = new LeaderStore();
  private final String holder;
  private final Duration ttl;
  private final Runnable onChange;
  private final CountDownLatch stop = new CountDownLatch(1);
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicLong statements = new AtomicLong();

  private volatile boolean leader;
  private long leaseEndsNanos;

  Elector(DataSource dataSource, String holder, Duration ttl, Runnable onChange) {
    this.dataSource = Objects.requireNonNull(dataSource);
    this.holder = Objects.requireNonNull(holder);
    this.ttl = Objects.requireNonNull(ttl);
    this.onChange = Objects.requireNonNull(onChange);
  }

  /** The lease a leader writes: three quarters of the TTL (see the class comment). */
  static Duration lease(Duration ttl) {
    return ttl.multipliedBy(3).dividedBy(4);
  }

  /** How often the leader renews and candidates look: a quarter of the TTL. */
  static long periodMillis(Duration ttl) {
    return Math.max(1, ttl.toMillis() / 4);
  }

  boolean isLeader() {
    return leader;
  }

  /** Statements this elector has issued, for the idle-cost accounting. */
  long statements() {
    return statements.get();
  }

  boolean stop(Duration timeout) {
    stop.countDown();
    try {
      return finished.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  @Override
  public void run() {
    long periodMs = periodMillis(ttl);
    try {
      while (stop.getCount() > 0) {
        step();
        // 80-100% of the period: spread out, and never later than the period.
        long sleep = periodMs * (80 + java.util.concurrent.ThreadLocalRandom.current().nextInt(21)) / 100;
        if (stop.await(Math.max(1, sleep), TimeUnit.MILLISECONDS)) {
          break;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      resign();
      finished.countDown();
    }
  }

  private void step() {
    try (Connection c = dataSource.getConnection()) {
      if (leader) {
        statements.incrementAndGet();
        long renewedAt = System.nanoTime();
        if (store.leaderRenew(c, MAINTENANCE, holder, lease(ttl))) {
          leaseEndsNanos = renewedAt + lease(ttl).toNanos();
        } else {
          change(false, "its lease was taken over");
        }
        return;
      }
      statements.incrementAndGet();
      String current = store.leaderHolder(c, MAINTENANCE);
      if (current != null && !current.equals(holder)) {
        return;
      }
      statements.incrementAndGet();
      long electedAt = System.nanoTime();
      if (store.leaderAttemptElect(c, MAINTENANCE, holder, lease(ttl))) {
        leaseEndsNanos = electedAt + lease(ttl).toNanos();
        change(true, "elected");
      }
    } catch (SQLException e) {
      if (leader && System.nanoTime() - leaseEndsNanos >= 0) {
        change(false, "the database was unreachable until its lease ran out");
      }
      LOG.log(System.Logger.Level.WARNING, "pgbus leader election failed: {0}", e.getMessage());
    }
  }

  private void resign() {
    if (!leader) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      store.leaderResign(c, MAINTENANCE, holder);
    } catch (SQLException e) {
      LOG.log(System.Logger.Level.WARNING, "pgbus could not resign leadership: {0}", e.getMessage());
    }
    change(false, "stopping");
  }

  private void change(boolean nowLeader, String why) {
    leader = nowLeader;
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus {0} {1} the maintenance leader ({2})",
        holder,
        nowLeader ? "is now" : "is no longer",
        why);
    onChange.run();
  }
}

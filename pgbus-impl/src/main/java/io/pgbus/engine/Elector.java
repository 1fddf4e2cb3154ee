package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Elects one maintenance leader among every engine on the same database, with a lease row (see
 * V2__leader.sql). The leader renews a lease of three quarters of the TTL every quarter of the TTL.
 * A candidate that sees a live leader stops after one plain read (no write, no row lock) and looks
 * again when the lease it saw would run out, but after half a TTL at the latest. A live leader's
 * lease always has at least half a TTL left, so candidates read every half TTL; when the leader
 * dies, its lease runs out at most three quarters of a TTL later and a candidate looks right then:
 * another engine leads within one TTL. After a resignation (the row is gone) a candidate takes over
 * within half a TTL.
 *
 * <p>Why not look every quarter TTL, as the leader acts: with the default TTL of 60 s that is one
 * read every 15 s per JVM, two thirds of an idle JVM's statements (docs/performance.md, fleet).
 *
 * <p>An engine with capsules goes further ({@link #followTicks}): its ticker's tick ({@code
 * pgbus.tick}) reads the lease anyway, once per poll ceiling, and hands it here ({@link #tickSaw}).
 * A candidate that saw a live lease then issues nothing of its own: it looks again only when a tick
 * reports the lease free (or its own), or when no tick came for twice the longer of the poll
 * ceiling and the TTL (a ticker that cannot reach the database). A dead leader is then replaced
 * within three quarters of a TTL (its lease running out) plus one poll ceiling (the next tick of
 * some follower): 45 s + 60 s with the defaults, and sooner where followers run jobs (they tick
 * every heartbeat interval).
 *
 * <p>A leader that stops cleanly deletes its lease row and, in the same statement, sends a NOTIFY
 * on {@value Channels#LEADER}: every follower's listener hears it ({@link #resignHeard}) and its
 * candidate looks at once, so another engine leads within moments instead of at the next tick. The
 * notification carries nothing and proves nothing (any login may NOTIFY any channel): it only
 * brings a look forward, one election attempt, at most one per {@link #RESIGNED_LOOK_GAP} per JVM,
 * so a flood of forged ones costs each JVM at most one lease read a second.
 *
 * <p>A leader that cannot reach the database stops acting as leader once its lease would have
 * expired by its own clock, so two leaders never run maintenance at once for longer than clock
 * drift allows. Maintenance is idempotent (SKIP LOCKED rescue, bounded deletes), so a brief overlap
 * is harmless.
 */
final class Elector extends Loop {

  static final String MAINTENANCE = "maintenance";

  /**
   * The shortest gap between two looks brought forward by {@link Channels#LEADER} notifications.
   */
  static final Duration RESIGNED_LOOK_GAP = Duration.ofSeconds(1);

  private static final System.Logger LOG = System.getLogger(Elector.class.getName());

  private final DataSource dataSource;
  private final LeaderStore store = new LeaderStore();
  private final String holder;
  private final Duration ttl;
  private final Runnable onChange;
  private final RenewalSeen onRenewed;
  private final AtomicLong statements = new AtomicLong();
  private final ErrorBackoff errors;

  private volatile boolean leader;
  private long leaseEndsNanos;
  // Following ticks (followTicks): 0 when not; else how long a candidate waits for one.
  private volatile long maxTickSilenceNanos;
  private volatile long lastTickNanos = System.nanoTime();
  private volatile boolean lookNow;
  private final AtomicLong lastResignLook =
      new AtomicLong(System.nanoTime() - RESIGNED_LOOK_GAP.toNanos());

  Elector(
      DataSource dataSource,
      String holder,
      ElectorConfig config,
      Runnable onChange,
      RenewalSeen onRenewed,
      Runnable onConnectionError) {
    Duration ttl = config.ttl();
    this.errors =
        new ErrorBackoff(
            "pgbus leader election",
            Duration.ofMillis(periodMillis(ttl)),
            Duration.ofMillis(periodMillis(ttl)),
            onConnectionError);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.holder = Objects.requireNonNull(holder);
    this.ttl = Objects.requireNonNull(ttl);
    this.onChange = Objects.requireNonNull(onChange);
    this.onRenewed = Objects.requireNonNull(onRenewed);
  }

  /**
   * Told of each renewal: whether any job was running and the earliest start-by deadline of a
   * waiting job (null: none), as read at {@code atNanos} or later.
   */
  interface RenewalSeen {
    void renewed(boolean jobsRunning, java.time.Instant nextStartBy, long atNanos);
  }

  /** The lease a leader writes: three quarters of the TTL (see the class comment). */
  static Duration lease(Duration ttl) {
    return ttl.multipliedBy(3).dividedBy(4);
  }

  /** How often the leader renews: a quarter of the TTL. */
  static long periodMillis(Duration ttl) {
    return Math.max(1, ttl.toMillis() / 4);
  }

  /**
   * How long a candidate waits before it looks again, having seen a lease with {@code remainingMs}
   * left by the database's clock: until that lease can have run out, and at most half a TTL (spread
   * to 80-100% of it, so candidates do not move in step).
   */
  static long candidateWaitMillis(Duration ttl, long remainingMs) {
    long cap =
        Math.max(1, ttl.toMillis() / 2) * (80 + ThreadLocalRandom.current().nextInt(21)) / 100;
    // The wait starts once the read has returned, so sleeping `remainingMs` from here wakes at
    // or after the expiry the database reported; 5 ms more absorbs clock granularity.
    return Math.max(1, Math.min(cap, remainingMs + 5));
  }

  boolean isLeader() {
    return leader;
  }

  /**
   * Lets the ticker's ticks stand in for a candidate's reads (see the class comment): {@code
   * maxSilence} is how long a candidate waits for a tick before it reads the lease itself. Call
   * before {@link #start}.
   */
  void followTicks(Duration maxSilence) {
    maxTickSilenceNanos = Math.max(1, maxSilence.toNanos());
  }

  /**
   * A tick read the lease: {@code holderSeen} is its live holder, or null when the lease is free. A
   * candidate looks at once when it is free or its own (a restart with the same worker id).
   */
  void tickSaw(String holderSeen) {
    lastTickNanos = System.nanoTime();
    if (!leader && (holderSeen == null || holderSeen.equals(holder))) {
      lookNow = true;
      signal().signal();
    }
  }

  /**
   * A {@value Channels#LEADER} notification was heard: a candidate looks at once, unless it already
   * looked for one within {@link #RESIGNED_LOOK_GAP} (the payload is ignored; see the class
   * comment). Cheap, never throws: it runs on the listener's thread.
   */
  void resignHeard() {
    long now = System.nanoTime();
    long last = lastResignLook.get();
    if (leader || now - last < RESIGNED_LOOK_GAP.toNanos()) {
      return;
    }
    if (lastResignLook.compareAndSet(last, now)) {
      lookNow = true;
      signal().signal();
    }
  }

  /** Statements this elector has issued, for the idle-cost accounting. */
  long statements() {
    return statements.get();
  }

  @Override
  protected void loop() throws InterruptedException {
    long periodMs = periodMillis(ttl);
    try {
      while (!stopping() && !moving()) {
        long seenLeaseMs;
        long failedWaitMs = -1;
        try {
          seenLeaseMs = step();
          errors.succeeded();
        } catch (SQLException | RuntimeException e) {
          // No failure ends the election loop: it looks again within a period (jittered), on a
          // fresh thread when the connection broke (Loop.run).
          failedWaitMs = errors.failed(e);
          moveAfter(e);
          if (leader && System.nanoTime() - leaseEndsNanos >= 0) {
            change(false, "the database was unreachable until its lease ran out");
          }
          seenLeaseMs = -1;
        }
        // A leader: 80-100% of the period, spread out and never later than the period. A failed
        // round: 50-100% of it. A candidate that saw a live lease: see candidateWaitMillis.
        long sleep =
            failedWaitMs >= 0
                ? failedWaitMs
                : seenLeaseMs >= 0
                    ? candidateWaitMillis(ttl, seenLeaseMs)
                    : periodMs * (80 + ThreadLocalRandom.current().nextInt(21)) / 100;
        if (failedWaitMs < 0 && seenLeaseMs >= 0 && maxTickSilenceNanos > 0) {
          awaitTick();
        } else {
          signal().sleep(Math.max(1, sleep));
        }
      }
    } finally {
      if (!moving()) {
        resign(); // a move goes on leading, on the next thread
      }
    }
  }

  /** A candidate that follows ticks waits for one that finds the lease free, or for silence. */
  private void awaitTick() throws InterruptedException {
    while (!stopping() && !lookNow) {
      long left = lastTickNanos + maxTickSilenceNanos - System.nanoTime();
      if (left <= 0) {
        return;
      }
      signal().await(left);
    }
  }

  /**
   * Renews, or looks and elects when the lease is free. Returns how many milliseconds the live
   * lease of another holder has left, or -1 when this engine leads or saw no such lease.
   */
  private long step() throws SQLException {
    lookNow = false;
    try (Connection c = dataSource.getConnection()) {
      if (leader) {
        statements.incrementAndGet();
        long renewedAt = System.nanoTime();
        LeaderStore.Renewal renewal = store.leaderRenew(c, MAINTENANCE, holder, lease(ttl));
        if (renewal.renewed()) {
          leaseEndsNanos = renewedAt + lease(ttl).toNanos();
          onRenewed.renewed(renewal.jobsRunning(), renewal.nextStartBy(), renewedAt);
        } else {
          change(false, "its lease was taken over");
        }
        return -1;
      }
      statements.incrementAndGet();
      LeaderStore.Lease current = store.leaderLease(c, MAINTENANCE);
      if (current != null && !current.holder().equals(holder)) {
        return current.remainingMillis();
      }
      statements.incrementAndGet();
      long electedAt = System.nanoTime();
      if (store.leaderAttemptElect(c, MAINTENANCE, holder, lease(ttl))) {
        leaseEndsNanos = electedAt + lease(ttl).toNanos();
        change(true, "elected");
      }
      return -1;
    }
  }

  private void resign() {
    if (!leader) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      statements.incrementAndGet();
      store.leaderResign(c, MAINTENANCE, holder);
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.WARNING, "pgbus could not resign leadership: {0}", e.getMessage());
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
    try {
      onChange.run();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "pgbus: reacting to a leadership change failed", e);
    }
  }
}

package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;

/**
 * Periodic upkeep, on the elected leader only, in three tasks: rescue of expired leases ({@code
 * RescueTask}), retention ({@code PruneTask}) and schedules ({@code ScheduleTask}). Rescue and
 * retention back off toward ten times their base interval while they find nothing to do and snap
 * back as soon as they do something, so an idle deployment pays almost nothing for them; rescue
 * also skips its rounds while the leader's lease renewals find no job running anywhere ({@link
 * #renewalSeen}). Schedules run at the next due run of any schedule (at least once per poll
 * ceiling), see {@link ScheduleEnqueuer}.
 *
 * <p>{@code ExpireTask} cancels waiting jobs past their start-by deadline, which the renewals also
 * read. A fourth task, {@code RollupTask}, writes the queues' per-minute history, backing off the
 * same way; a fifth, {@code ArchiveTask}, moves finished jobs into pgbus.job_history and keeps its
 * partitions ({@link ArchiveStore}).
 */
final class Maintainer extends Loop {

  private static final System.Logger LOG = System.getLogger(Maintainer.class.getName());
  private static final int RESCUE_BATCH = 1000;
  // The dependency edges read per prune round, in prune batches (10,000 edges at the default).
  static final int EDGE_WINDOW_BATCHES = 10;

  /** The wait after a task's first failed round in a row; later ones double up to its base. */
  static final Duration FIRST_RETRY = Duration.ofSeconds(1);

  /** One periodic task with its own backoff. */
  private abstract static class Task {
    final String name;
    final IdleBackoff backoff;
    final ErrorBackoff errors; // the wait after a failed round
    volatile long nextAt = System.nanoTime();
    long startedAt = System.nanoTime() - SCHEDULE_WAKE_GAP.toNanos(); // the maintainer's thread

    Task(String name, Duration base) {
      this.name = name;
      this.backoff = new IdleBackoff(base);
      // A failed round retries within a second, doubling to the base: one broken pooled
      // connection (a pooler or database restart) must not cost a minute of schedule runs
      // (issue #33: the leader's schedules waited 43 s after one I/O error).
      this.errors =
          new ErrorBackoff(
              "pgbus maintenance '" + name + "'", min(base, FIRST_RETRY), base, () -> {});
    }

    /** Does one round; returns how many rows it changed. */
    abstract long runOnce(Connection c) throws Exception;

    /** Whether a round now could find anything; false skips it, as a round that found nothing. */
    boolean mayFindWork(long nowNanos) {
      return true;
    }

    /** How long after a round that made {@code progress} the next one runs. */
    Duration after(long progress) {
      return backoff.next(progress);
    }

    final void schedule(long progress) {
      nextAt = System.nanoTime() + after(progress).toNanos();
    }
  }

  /**
   * Enqueues the due runs of the schedules ({@link ScheduleEnqueuer}), and runs again just past the
   * next due run, whatever the round found.
   */
  private static final class ScheduleTask extends Task {
    private final ScheduleEnqueuer enqueuer;
    private Duration untilNext = Duration.ZERO;

    ScheduleTask(ScheduleEnqueuer enqueuer) {
      super("schedules", ScheduleEnqueuer.MAX_WAIT);
      this.enqueuer = enqueuer;
    }

    @Override
    long runOnce(Connection c) throws Exception {
      ScheduleEnqueuer.Tick tick = enqueuer.tick(c);
      untilNext = tick.untilNext();
      return tick.enqueued();
    }

    @Override
    Duration after(long progress) {
      return untilNext.plus(CRON_SLACK);
    }
  }

  /** Takes back the jobs whose lease expired or whose JVM's heartbeat stopped. */
  private final class RescueTask extends Task {
    private final JobStore store;
    private final Duration atLeastEvery;

    RescueTask(JobStore store, Duration base, Duration atLeastEvery) {
      super("rescue", min(base, atLeastEvery));
      this.store = store;
      this.atLeastEvery = atLeastEvery;
    }

    // The idle backoff stops at the heartbeat interval: a dead JVM's row goes stale two thirds of
    // a TTL after its last beat, and its jobs must be back within one TTL.
    @Override
    Duration after(long progress) {
      return min(super.after(progress), atLeastEvery);
    }

    // Only running jobs are ever rescued. A renewal that found none at noneRunningAt proves that
    // nothing can need a rescue for nothingToRescueFor after it (ExecutionConfig), and a renewal
    // comes every quarter of pgbus.leader.ttl: with the defaults (every 15 s, a window of 19 s)
    // an idle deployment's rescue never runs, and a round skipped here is one that could not have
    // rescued anything, so a crashed JVM's jobs come back as soon as before. Before, the rescue
    // ran every 10 s in a transaction of its own: 0.3 of a lone idle leader's 0.35 statements/s.
    @Override
    boolean mayFindWork(long nowNanos) {
      Long none = noneRunningAt;
      return none == null || nowNanos - none >= nothingToRescueFor.toNanos();
    }

    @Override
    long runOnce(Connection c) throws Exception {
      // One transaction: a rescued job that died there is reported to its batch and dependents
      // (V16) with its own state change, or neither happens.
      long n =
          endJobs(
              c,
              () -> store.jobRescueExpired(c, RESCUE_BATCH),
              "pgbus rescued jobs with expired leases or lost heartbeats: {0}");
      rescued.addAndGet(n);
      return n;
    }
  }

  /**
   * Cancels the waiting jobs whose start-by deadline passed (V43; {@link JobStore#jobExpire}), in
   * one transaction with the reports to their batches and dependents. It knows the earliest
   * deadline of a waiting job from the leader's lease renewal (every quarter of {@code
   * pgbus.leader.ttl}, {@link #renewalSeen}), so an idle deployment pays no statement for it; a
   * round runs once that deadline has passed (checked every second, for free). After a round, and
   * when a leadership begins, it reads the next deadline itself (one autocommit statement on an
   * index of the jobs that have one). The claim already refuses a late job, so the wait only delays
   * when its end becomes final and visible: a deadline enqueued on another JVM is seen at the next
   * renewal (15 s with the defaults).
   */
  private final class ExpireTask extends Task {
    // The maintainer's thread reads and writes these; leadershipChanged (another thread) clears
    // known, hence volatile. Not known: the next round reads the deadline itself.
    private volatile boolean known;
    private Instant next; // the earliest deadline known; null: none
    private long readAt; // System.nanoTime() before next was read

    private final JobStore store;

    ExpireTask(JobStore store) {
      super("expire", Duration.ofSeconds(1));
      this.store = store;
    }

    void forget() {
      known = false;
    }

    @Override
    boolean mayFindWork(long nowNanos) {
      Renewed r = renewed;
      if (known && r != null && r.atNanos - readAt > 0) {
        next = r.nextStartBy;
        readAt = r.atNanos;
      }
      return !known || (next != null && !next.isAfter(Instant.now()));
    }

    @Override
    long runOnce(Connection c) throws Exception {
      if (!known) {
        readAt = System.nanoTime();
        next = store.jobNextStartBy(c);
        known = true;
        if (next == null || next.isAfter(Instant.now())) {
          return 0;
        }
      }
      long n =
          endJobs(
              c,
              () -> store.jobExpire(c, RESCUE_BATCH),
              "pgbus cancelled jobs not started by their start-by deadline (expired), by queue:"
                  + " {0}");
      expired.addAndGet(n);
      known = false; // the next deadline: read at the next round
      return n;
    }

    @Override
    Duration after(long progress) {
      return backoff.base();
    }
  }

  /**
   * Deletes what is past its retention: finished jobs, audit rows, then the batches and dependency
   * edges whose jobs are gone, and the rows of JVMs not seen for long.
   */
  private final class PruneTask extends Task {
    private final JobStore store;
    private final RetentionConfig retention;
    private final AuditStore audit = new AuditStore();
    private final LinkStore links = new LinkStore();
    private final NodeStore nodes = new NodeStore();
    // Where the walk of the dependency edges goes on (LinkStore.DEPENDENCY_PRUNE); the maintainer's
    // thread only. A new leader starts from the first edge.
    private long edgesAfter = LinkStore.EDGES_FROM_START;

    PruneTask(JobStore store, Duration base, RetentionConfig retention) {
      super("prune", base);
      this.store = store;
      this.retention = retention;
    }

    @Override
    long runOnce(Connection c) throws Exception {
      long n =
          store.jobPrune(c, "completed", retention.completed(), retention.batch())
              + store.jobPrune(c, "cancelled", retention.completed(), retention.batch())
              + store.jobPrune(c, "dead", retention.dead(), retention.batch())
              + audit.auditPrune(c, retention.audit(), retention.batch())
              // after the jobs: a batch or edge goes once its jobs are gone (V16)
              + links.batchPrune(c, shortestRetention(), retention.batch())
              + links.workflowPrune(c, shortestRetention(), retention.batch())
              + dependencyPrune(c)
              // housekeeping only: an expired claim holds nothing (R__unique.sql)
              + UniqueEnqueue.expireClaims(c, retention.batch());
      pruned.addAndGet(n);
      List<String> gone = nodes.nodePrune(c);
      if (!gone.isEmpty()) {
        LOG.log(
            System.Logger.Level.INFO,
            "pgbus pruned the pgbus.node rows of {0} JVM(s) not seen for {1} (or {2} of their"
                + " heartbeat TTLs): {3}",
            gone.size(),
            Durations.format(NodeStore.PRUNE_AFTER),
            NodeStore.PRUNE_AFTER_TTLS,
            gone);
      }
      return n + gone.size();
    }

    /**
     * One window of the dependency edges, {@link #EDGE_WINDOW_BATCHES} prune batches long: a lap of
     * the edges takes (edges / window) rounds, each costing the same however many jobs wait.
     */
    private int dependencyPrune(Connection c) throws SQLException {
      int batch = retention.batch();
      LinkStore.EdgeRound round =
          links.dependencyPrune(
              c, edgesAfter, Math.multiplyExact(batch, EDGE_WINDOW_BATCHES), batch);
      edgesAfter = round.next();
      return round.deleted();
    }

    /** The shortest time a finished job is kept: a batch or workflow younger is not empty. */
    private Duration shortestRetention() {
      return retention.completed().compareTo(retention.dead()) <= 0
          ? retention.completed()
          : retention.dead();
    }
  }

  /**
   * Writes each queue's per-minute history and deletes it past its retention ({@link
   * HistoryStore}). Once a minute while jobs finish; while none do, it backs off to ten minutes and
   * then catches up every minute it skipped in one round.
   */
  private static final class RollupTask extends Task {
    private final HistoryStore history = new HistoryStore();
    private final Duration keep;

    RollupTask(Duration keep) {
      super("history", ROLLUP_INTERVAL);
      this.keep = keep;
    }

    @Override
    long runOnce(Connection c) throws Exception {
      return history.rollup(c, keep);
    }
  }

  /**
   * Moves finished jobs into pgbus.job_history and keeps its partitions: created ahead, dropped
   * past the retention ({@link ArchiveStore}, V33). Every ten seconds while it moves jobs, backing
   * off to 100 s while there is none to move.
   */
  private final class ArchiveTask extends Task {
    private final ArchiveStore archive = new ArchiveStore();
    private final RetentionConfig retention;

    ArchiveTask(RetentionConfig retention) {
      super("archive", ARCHIVE_INTERVAL);
      this.retention = retention;
    }

    @Override
    long runOnce(Connection c) throws Exception {
      ArchiveStore.Round r = archive.archive(c, retention.completed(), retention.batch());
      archived.addAndGet(r.moved());
      return r.total();
    }
  }

  /** The base interval of the archive task. */
  static final Duration ARCHIVE_INTERVAL = Duration.ofSeconds(10);

  /** The base interval of the history rollup: its rows are minutes. */
  static final Duration ROLLUP_INTERVAL = Duration.ofMinutes(1);

  private final DataSource dataSource;
  private final BooleanSupplier leader;
  private final List<Task> tasks;
  private final AtomicLong rescued = new AtomicLong();
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong pruned = new AtomicLong();
  private final AtomicLong archived = new AtomicLong();
  private final AtomicLong rounds = new AtomicLong();
  private final ErrorBackoff errors =
      new ErrorBackoff(
          "pgbus maintenance loop", Duration.ofSeconds(1), Duration.ofSeconds(1), () -> {});

  /**
   * After a cron tick, wait this much past the next due run, so the database's clock has passed it
   * when the next tick reads it. An early tick costs one read and re-arms.
   */
  private static final Duration CRON_SLACK = Duration.ofMillis(5);

  /**
   * The least time between the starts of two schedule ticks that a schedule change asked for: a
   * NOTIFY anyone may send must not make the leader read the schedules in a loop. A change after a
   * quiet spell is read at once; a burst of them, once per gap.
   */
  static final Duration SCHEDULE_WAKE_GAP = Duration.ofMillis(250);

  private final AtomicBoolean scheduleWake = new AtomicBoolean();
  private final AtomicLong scheduleWakes = new AtomicLong();
  private final Task schedules; // null: no schedules
  private final Task rescue;
  private final ExpireTask expire;
  private final Duration nothingToRescueFor;
  // When the leader's last lease renewal found no running job (System.nanoTime, taken before it);
  // null when it found one, or none has been read since this engine became the leader.
  private volatile Long noneRunningAt;
  private volatile Renewed renewed;

  Maintainer(
      DataSource dataSource,
      JobStore store,
      MaintainerConfig config,
      RetentionConfig retention,
      BooleanSupplier leader,
      ScheduleEnqueuer cron,
      Duration rescueAtLeastEvery,
      Duration nothingToRescueFor) {
    this.dataSource = Objects.requireNonNull(dataSource);
    this.nothingToRescueFor = Objects.requireNonNull(nothingToRescueFor);
    this.leader = Objects.requireNonNull(leader);
    this.schedules = cron == null ? null : new ScheduleTask(cron);
    this.rescue = new RescueTask(store, config.rescueInterval(), rescueAtLeastEvery);
    var all = new ArrayList<Task>();
    if (schedules != null) {
      all.add(schedules);
    }
    all.add(rescue);
    this.expire = new ExpireTask(store);
    all.add(expire);
    all.add(new PruneTask(store, config.pruneInterval(), retention));
    all.add(new RollupTask(config.historyRetention()));
    all.add(new ArchiveTask(retention));
    this.tasks = List.copyOf(all);
  }

  /** A statement of the store that changes jobs and says how many, per queue. */
  @FunctionalInterface
  private interface PerQueue {
    Map<String, Long> run() throws Exception;
  }

  /**
   * Runs {@code work} in one transaction of its own on {@code c}, logs its per-queue counts with
   * {@code message} when it changed any, and returns their sum.
   */
  private static long endJobs(Connection c, PerQueue work, String message) throws Exception {
    Map<String, Long> perQueue;
    c.setAutoCommit(false);
    try {
      perQueue = work.run();
      c.commit();
    } catch (Exception e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
    long n = perQueue.values().stream().mapToLong(Long::longValue).sum();
    if (n > 0) {
      LOG.log(System.Logger.Level.INFO, message, perQueue);
    }
    return n;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** Jobs this JVM cancelled, as leader, for their start-by deadline. */
  long expired() {
    return expired.get();
  }

  long rescued() {
    return rescued.get();
  }

  long pruned() {
    return pruned.get();
  }

  /** Finished jobs moved into pgbus.job_history. */
  long archived() {
    return archived.get();
  }

  /** Maintenance rounds run (each task run counts one). */
  long rounds() {
    return rounds.get();
  }

  /**
   * Some loop lost the database, or the listener reconnects: jobs that were running may be left
   * stranded, so rescue goes back to its base interval rather than waiting out an idle backoff of
   * up to ten times that once the database is back.
   */
  void connectionLost() {
    rescue.backoff.reset();
    long soon = System.nanoTime() + rescue.backoff.base().toNanos();
    if (rescue.nextAt - soon > 0) {
      rescue.nextAt = soon;
    }
    signal().signal();
  }

  /** The rescue task's idle backoff factor (1 to {@link IdleBackoff#MAX_FACTOR}), for tests. */
  int rescueBackoffFactor() {
    return rescue.backoff.factor();
  }

  /**
   * A schedule changed somewhere ({@link Channels#SCHEDULE}): the leader re-reads the schedules now
   * rather than at its next tick, at most once per {@link #SCHEDULE_WAKE_GAP}. Any thread; a
   * follower ignores it (it reads them all when it becomes leader).
   */
  void schedulesChanged() {
    if (schedules != null) {
      scheduleWake.set(true);
      signal().signal();
    }
  }

  /** Schedule ticks a change brought forward (for tests and metrics). */
  long scheduleWakes() {
    return scheduleWakes.get();
  }

  /**
   * The leader's lease renewal read whether any job runs anywhere and the earliest start-by
   * deadline of a waiting job ({@link Elector}), at {@code atNanos} or later; any thread.
   */
  void renewalSeen(boolean running, Instant nextStartBy, long atNanos) {
    noneRunningAt = running ? null : atNanos;
    renewed = new Renewed(nextStartBy, atNanos);
  }

  /** What the last renewal read of the start-by deadlines ({@link ExpireTask}). */
  private record Renewed(Instant nextStartBy, long atNanos) {}

  /** Leadership changed: a new leader starts every task at once, at its base interval. */
  void leadershipChanged() {
    noneRunningAt = null;
    renewed = null;
    expire.forget();
    for (Task t : tasks) {
      t.backoff.reset();
      t.nextAt = System.nanoTime();
    }
    signal().signal();
  }

  @Override
  protected void loop() throws InterruptedException {
    // runTask keeps a task's failure to itself; one that reaches here is a bug: log, go on.
    runRounds(
        () -> {
          round();
          return true;
        },
        errors,
        () -> {});
  }

  private void round() throws InterruptedException {
    boolean woken = scheduleWake.getAndSet(false);
    if (!leader.getAsBoolean()) {
      // Only the elected leader maintains; the others wait, issuing nothing.
      signal().await(TimeUnit.SECONDS.toNanos(1));
      return;
    }
    if (woken) {
      // Read at once, or at the gap after the tick before: never sooner, whatever the sender.
      long at = schedules.startedAt + SCHEDULE_WAKE_GAP.toNanos();
      if (schedules.nextAt - at > 0) {
        schedules.nextAt = at;
        scheduleWakes.incrementAndGet();
      }
    }
    long now = System.nanoTime();
    long next = Long.MAX_VALUE;
    for (Task t : tasks) {
      if (now - t.nextAt >= 0) {
        if (t.mayFindWork(now)) {
          runTask(t);
        } else {
          t.schedule(0);
        }
      }
      next = Math.min(next, t.nextAt - System.nanoTime());
    }
    signal().await(Math.min(Math.max(1, next), TimeUnit.SECONDS.toNanos(1)));
  }

  /**
   * Runs one round of a task and schedules the next: after its idle backoff, or, when the round
   * failed, after {@link #FIRST_RETRY} doubling up to its base interval (jittered), so a database
   * or pooler that comes back is maintained soon.
   */
  private void runTask(Task t) {
    rounds.incrementAndGet();
    t.startedAt = System.nanoTime();
    try (Connection c = dataSource.getConnection()) {
      long n = t.runOnce(c);
      t.errors.succeeded();
      t.schedule(n);
    } catch (Exception e) {
      long waitMs = t.errors.failed(e);
      t.backoff.reset();
      t.nextAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
      moveAfter(e); // the loop's rounds end, and go on on a fresh thread (Loop.run)
    }
  }
}

package io.pgbus.engine;

import io.pgbus.MisfirePolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.Schedules;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueues the runs of the schedules in {@code pgbus.schedule} that are due. It runs as a
 * maintenance task, so only on the elected leader, at the earliest next run (and at least once per
 * {@code maxWait}, the poll ceiling capped at a minute: that is how soon a change made on another
 * JVM is seen).
 *
 * <p>Exactly once per run: runs are enqueued in the same transaction that moves the schedule's
 * {@code next_run_at} past them, a compare-and-set on the {@code revision} this tick read. A second
 * leader for a moment, a new leader after a change, or an API change in between, make the update
 * find another revision, and nothing is enqueued. The job also carries the unique key {@code
 * cron:<name>:<instant>}, which names the run it is for.
 *
 * <p>Runs missed while no leader ran follow the schedule's {@link MisfirePolicy}; see {@link
 * #runsDue}. Times are the database's clock ({@code now()}), so JVMs with skewed clocks agree.
 */
final class ScheduleEnqueuer {

  private static final System.Logger LOG = System.getLogger(ScheduleEnqueuer.class.getName());

  /** The most due schedules one tick reads; a full batch makes the next tick follow at once. */
  static final int BATCH = 500;

  /** The longest a tick ever waits for the next. */
  static final Duration MAX_WAIT = Duration.ofMinutes(1);

  /** After a tick in which a schedule failed, the next waits at least this (no hot loop). */
  static final Duration AFTER_FAILURE = Duration.ofSeconds(5);

  /**
   * How long a schedule whose row cannot run ({@link io.pgbus.Schedule#problem}) is left out of the
   * ticks before it is read again: a row fixed by SQL runs within this.
   */
  static final Duration RECHECK_UNREADABLE = Duration.ofMinutes(1);

  /** The most unreadable schedules remembered; past it, the rest are read (and skipped) again. */
  static final int MAX_UNREADABLE = 10_000;

  /** What one tick did. */
  record Tick(int enqueued, Duration untilNext) {}

  /** A schedule whose row cannot run: the problem logged, and when to read it again. */
  private record Unreadable(String problem, Instant recheckAt) {}

  private final List<CronJob> configured;
  private final ScheduleStore store = new ScheduleStore();
  private final JobStore jobs;
  private final Transactions transactions;
  private final Duration maxWait;
  private final java.util.function.UnaryOperator<NewJob> seal;
  private final RunOverlap overlap;
  private final AtomicLong enqueued = new AtomicLong();
  private final AtomicLong skipped = new AtomicLong();
  // By name. Only the maintainer's thread ticks; the doctor reads the table, not this.
  private final Map<String, Unreadable> unreadable = new HashMap<>();
  // The problem last logged per schedule: a row re-read after its recheck logs only a new problem.
  private final Map<String, String> logged = new HashMap<>();
  private volatile boolean configSynced;

  /**
   * @param configured the crons of the configuration, made schedules (source {@code config}) by
   *     {@link #syncConfig}
   * @param maxWait the longest wait between ticks (the poll ceiling; at most {@link #MAX_WAIT})
   */
  ScheduleEnqueuer(
      List<CronJob> configured, JobStore jobs, Transactions transactions, Duration maxWait) {
    this(configured, jobs, transactions, maxWait, job -> job);
  }

  /**
   * @param seal prepares a run as every other enqueue of this JVM does ({@link Jobs#scheduleRun}):
   *     its payload sealed when its queue encrypts, its queue's max-wait as its deadline
   */
  ScheduleEnqueuer(
      List<CronJob> configured,
      JobStore jobs,
      Transactions transactions,
      Duration maxWait,
      java.util.function.UnaryOperator<NewJob> seal) {
    this.seal = Objects.requireNonNull(seal, "seal");
    this.overlap = new RunOverlap(jobs, seal);
    this.configured = List.copyOf(configured);
    this.jobs = Objects.requireNonNull(jobs);
    this.transactions = Objects.requireNonNull(transactions);
    this.maxWait = maxWait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : maxWait;
    this.configSynced = configured.isEmpty();
  }

  /** Runs this JVM skipped by their schedule's overlap policy {@code skip}. */
  long skipped() {
    return skipped.get();
  }

  /** Runs enqueued by this JVM. */
  long enqueued() {
    return enqueued.get();
  }

  /** The schedule a configured cron stands for. */
  static ScheduleDefinition definition(CronJob cron) {
    ScheduleDefinition d =
        ScheduleDefinition.of(cron.name(), cron.schedule(), cron.queue())
            .inZone(cron.zone().getId())
            .withPayloadJson(cron.payloadJson());
    d =
        cron.misfire() == MisfirePolicy.CATCH_UP
            ? d.catchingUp(cron.catchUpLimit())
            : d.withMisfire(cron.misfire());
    return d.withOverlap(cron.overlap());
  }

  /**
   * At an engine's start, on every JVM: {@link #syncConfig}. A failure (database down, no V15
   * schema yet) is logged; the leader's schedule task tries again before its first tick.
   */
  void syncConfigAtStart() {
    if (configured.isEmpty()) {
      return;
    }
    try {
      syncConfig(null);
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not store the configured crons as schedules yet ({0}); the maintenance"
              + " leader tries again",
          e.toString());
    }
  }

  /**
   * Creates or updates the configured crons as schedules (source {@code config}), in one
   * transaction, by the database's clock or {@code clock}. A new one starts with its next run after
   * now, or, when {@code pgbus.cron} (before V15) recorded a run for its name, after that.
   * Schedules no longer configured are left alone. Returns how many rows changed.
   */
  int syncConfig(Instant clock) throws Exception {
    int changed =
        transactions.inNewTransaction(
            c -> {
              Instant now = clock != null ? clock : store.now(c);
              int n = 0;
              for (CronJob cron : configured) {
                CronSchedule times = cron.parsedSchedule();
                Instant before = store.cronLastRun(c, cron.name());
                Instant next =
                    times.nextAfter(before != null && before.isBefore(now) ? before : now);
                if (store.scheduleUpsertConfig(c, definition(cron), next, null)) {
                  n++;
                }
              }
              return n;
            });
    configSynced = true;
    if (changed > 0) {
      LOG.log(
          System.Logger.Level.INFO,
          "pgbus: {0} schedule(s) created or updated from the configuration (pgbus.crons)",
          changed);
    }
    return changed;
  }

  /** Enqueues what is due by the database's clock. */
  Tick tick(Connection c) throws Exception {
    return tick(c, null);
  }

  /**
   * Enqueues what is due at {@code clock}, or by the database's clock when it is null (tests drive
   * the clock to show what happens after downtime).
   */
  Tick tick(Connection c, Instant clock) throws Exception {
    if (!configSynced) {
      syncConfig(clock);
    }
    Instant now;
    if (clock == null) {
      // The idle tick is one statement: the clock and the earliest next run. Past an unreadable
      // schedule's recheck time the earliest read it skipped is stale, so read again without it.
      ScheduleStore.Clock read = store.scheduleClock(c, unreadable.keySet());
      now = read.now();
      if (unreadable.values().removeIf(u -> !u.recheckAt().isAfter(now))) {
        read = new ScheduleStore.Clock(now, store.scheduleEarliest(c, unreadable.keySet()));
      }
      if (read.earliest() == null || read.earliest().isAfter(now)) {
        return new Tick(0, until(now, read.earliest(), false));
      }
    } else {
      now = clock;
      unreadable.values().removeIf(u -> !u.recheckAt().isAfter(now));
    }
    List<ScheduleStore.Row> due = store.scheduleDue(c, now, unreadable.keySet(), BATCH);
    int n = 0;
    boolean failed = false;
    for (ScheduleStore.Row row : due) {
      if (!row.schedule().readable()) {
        skip(row.schedule(), now);
        continue;
      }
      logged.remove(row.schedule().name());
      try {
        n += enqueueDue(row, now);
      } catch (Exception e) {
        // One bad schedule (its queue's payload refused, say) must not hold up the others.
        failed = true;
        LOG.log(
            System.Logger.Level.WARNING,
            "pgbus schedule ''{0}'' could not enqueue its runs due at {1}: {2}; retrying at the"
                + " next tick",
            row.schedule().name(),
            row.schedule().nextRun(),
            e.getMessage());
      }
    }
    if (due.size() == BATCH) {
      return new Tick(n, Duration.ZERO);
    }
    return new Tick(n, until(now, store.scheduleEarliest(c, unreadable.keySet()), failed));
  }

  /** How long the next tick waits: until {@code earliest}, at most {@link #maxWait}. */
  private Duration until(Instant now, Instant earliest, boolean failed) {
    Duration until = earliest == null ? maxWait : Duration.between(now, earliest);
    if (until.isNegative()) {
      until = Duration.ZERO;
    }
    if (failed && until.compareTo(AFTER_FAILURE) < 0) {
      until = AFTER_FAILURE;
    }
    return until.compareTo(maxWait) > 0 ? maxWait : until;
  }

  /**
   * Leaves a schedule whose row cannot run out of the ticks for {@link #RECHECK_UNREADABLE}, and
   * logs it once per problem (a WARNING at the first tick that meets it, not at every tick). The
   * doctor and the admin API show it until it is fixed or deleted.
   */
  private void skip(Schedule s, Instant now) {
    Unreadable before = unreadable.get(s.name());
    if (unreadable.size() >= MAX_UNREADABLE && before == null) {
      return;
    }
    unreadable.put(s.name(), new Unreadable(s.problem(), now.plus(RECHECK_UNREADABLE)));
    if (!s.problem().equals(logged.get(s.name()))) {
      if (logged.size() >= MAX_UNREADABLE) {
        logged.clear();
      }
      logged.put(s.name(), s.problem());
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus schedule ''{0}'' is skipped, the other schedules run: {1}",
          s.name(),
          s.problem());
    }
  }

  /** The unique key of a schedule's run: names the schedule and the instant it is for. */
  static String runKey(String schedule, Instant run) {
    return "cron:" + schedule + ":" + run;
  }

  /**
   * The runs to enqueue, oldest first, for a schedule whose first run not dealt with is {@code
   * next}, seen at {@code now}. A run seen within {@link Schedules#MISFIRE_GRACE} of its time is on
   * time; runs before that were missed: {@link MisfirePolicy#SKIP} enqueues only an on-time run,
   * {@link MisfirePolicy#RUN_ONCE} the latest run, late or not, {@link MisfirePolicy#CATCH_UP} the
   * latest {@code limit} runs since {@code next}. Bounded work: it walks back from now at most
   * {@code limit} runs, never forward over a long downtime.
   */
  static List<Instant> runsDue(
      CronSchedule times, Instant next, Instant now, MisfirePolicy policy, Integer limit) {
    Instant latest = times.latestAtOrBefore(now);
    if (latest == null || latest.isBefore(next)) {
      return List.of();
    }
    boolean onTime = Duration.between(latest, now).compareTo(Schedules.MISFIRE_GRACE) <= 0;
    switch (policy) {
      case SKIP:
        return onTime ? List.of(latest) : List.of();
      case RUN_ONCE:
        return List.of(latest);
      case CATCH_UP:
      default:
        var runs = new ArrayList<Instant>();
        Instant t = latest;
        while (t != null && !t.isBefore(next) && runs.size() < limit) {
          runs.add(t);
          t = times.latestAtOrBefore(t.minusMillis(1));
        }
        Collections.reverse(runs);
        return runs;
    }
  }

  private int enqueueDue(ScheduleStore.Row row, Instant now) throws Exception {
    ScheduleDefinition d = row.definition();
    CronSchedule times = CronSchedule.parse(d.cron(), ZoneId.of(d.zone()));
    Instant next = row.schedule().nextRun();
    List<Instant> runs = runsDue(times, next, now, d.misfire(), d.catchUpLimit());
    Instant following = times.nextAfter(now);
    // -1: another leader or a change moved the row on first, and nothing was written.
    int done =
        transactions.inNewTransaction(
            c -> {
              if (!store.scheduleAdvance(c, d.name(), row.revision(), following, null)) {
                return -1;
              }
              return dealWith(c, d, runs, row.schedule().lastJobId());
            });
    if (done < 0) {
      return 0;
    }
    enqueued.addAndGet(done);
    Instant firstKept = runs.isEmpty() ? null : runs.get(0);
    if (firstKept == null || firstKept.isAfter(next)) {
      LOG.log(
          System.Logger.Level.INFO,
          "pgbus schedule ''{0}'' ({1} in {2}): runs from {3} to before {4} were missed (no leader"
              + " ran) and are dropped by its misfire policy {5}; enqueued {6} run(s) to queue"
              + " ''{7}''",
          d.name(),
          d.cron(),
          d.zone(),
          next,
          firstKept == null ? now : firstKept,
          d.misfire(),
          done,
          d.queue());
    } else {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus schedule ''{0}'' enqueued {1} run(s) from {2} to queue ''{3}''",
          d.name(),
          done,
          firstKept,
          d.queue());
    }
    return done;
  }

  /**
   * Each run under the schedule's overlap policy, oldest first, each run's previous being the one
   * before it; then the outcome of the latest, for the next tick (whichever JVM leads then) to
   * read. Returns how many runs were enqueued.
   */
  private int dealWith(Connection c, ScheduleDefinition d, List<Instant> runs, Long previous)
      throws java.sql.SQLException {
    if (runs.isEmpty()) {
      return 0;
    }
    Long last = previous;
    Instant lastEnqueued = null;
    String outcome = null;
    int n = 0;
    for (Instant run : runs) {
      RunOverlap.Dealt dealt = overlap.deal(c, d, run, last);
      last = dealt.jobId();
      outcome = dealt.outcome();
      if (dealt.enqueued()) {
        lastEnqueued = run;
        n++;
      } else {
        skipped.incrementAndGet();
        LOG.log(
            System.Logger.Level.INFO,
            "pgbus schedule ''{0}'': the run at {1} is skipped (overlap skip): its previous run,"
                + " job {2}, still waits or runs",
            d.name(),
            run,
            last);
      }
    }
    store.scheduleRecordRun(c, d.name(), lastEnqueued, last, outcome);
    return n;
  }
}

package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Enqueues the runs of the configured crons that are due. It runs as a maintenance task, so only on
 * the elected leader, at each cron's next run (and at least once a minute).
 *
 * <p>Exactly once per run: a run is enqueued in the same transaction that moves the cron's {@code
 * last_run_at} in {@code pgbus.cron} from the value this tick read to the run's instant (a
 * compare-and-set). A second leader for a moment, or a new leader after a change, cannot enqueue a
 * run again: its update finds {@code last_run_at} moved and enqueues nothing. The job also carries
 * the unique key {@code cron:<name>:<instant>}, which names the run it is for.
 *
 * <p>No catch-up storm: each tick enqueues at most one run per cron, the latest that is due. Runs
 * missed while no leader ran (downtime, a leader change) are skipped, except that latest one, which
 * runs late. A cron seen for the first time starts after that moment.
 *
 * <p>Times are the database's clock ({@code now()}), so JVMs with skewed clocks agree.
 */
final class CronEnqueuer {

  private static final System.Logger LOG = System.getLogger(CronEnqueuer.class.getName());

  /** The longest a tick waits for the next; also how soon a changed pgbus.cron row is seen. */
  static final Duration MAX_WAIT = Duration.ofMinutes(1);

  /** What one tick did. */
  record Tick(int enqueued, Duration untilNext) {}

  private final Map<String, CronJob> crons = new LinkedHashMap<>();
  private final Map<String, CronSchedule> schedules = new LinkedHashMap<>();
  private final List<String> names;
  private final CronStore store = new CronStore();
  private final JobStore jobs;
  private final Transactions transactions;
  private final AtomicLong enqueued = new AtomicLong();

  CronEnqueuer(List<CronJob> crons, JobStore jobs, Transactions transactions) {
    for (CronJob c : crons) {
      this.crons.put(c.name(), c);
      this.schedules.put(c.name(), c.parsedSchedule());
    }
    this.names = List.copyOf(this.crons.keySet());
    this.jobs = Objects.requireNonNull(jobs);
    this.transactions = Objects.requireNonNull(transactions);
  }

  /** Runs enqueued by this JVM. */
  long enqueued() {
    return enqueued.get();
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
    CronStore.State state = store.cronState(c, names);
    Instant now = clock != null ? clock : state.now();
    int n = 0;
    Instant next = null;
    for (CronJob cron : crons.values()) {
      CronSchedule schedule = schedules.get(cron.name());
      Instant last = state.lastRuns().get(cron.name());
      if (last == null) {
        store.cronInit(c, cron.name(), now);
        last = now;
      } else {
        Instant due = schedule.latestAtOrBefore(now);
        if (due != null && due.isAfter(last)) {
          try {
            if (enqueueRun(cron, schedule, last, due)) {
              n++;
            }
          } catch (Exception e) {
            // One bad cron (its queue's payload refused, say) must not hold up the others.
            LOG.log(
                System.Logger.Level.WARNING,
                "pgbus cron ''{0}'' could not enqueue its run of {1}: {2}; retrying at the next tick",
                cron.name(),
                due,
                e.getMessage());
            continue;
          }
          last = due;
        }
      }
      Instant following = schedule.nextAfter(last.isAfter(now) ? last : now);
      if (following != null && (next == null || following.isBefore(next))) {
        next = following;
      }
    }
    Duration until = next == null ? MAX_WAIT : Duration.between(now, next);
    if (until.isNegative()) {
      until = Duration.ZERO;
    }
    return new Tick(n, until.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : until);
  }

  /** The unique key of a cron's run: names the cron and the instant it is for. */
  static String runKey(String cron, Instant run) {
    return "cron:" + cron + ":" + run;
  }

  private boolean enqueueRun(CronJob cron, CronSchedule schedule, Instant last, Instant due)
      throws Exception {
    boolean ours =
        transactions.inNewTransaction(
            c -> {
              if (!store.cronAdvance(c, cron.name(), last, due)) {
                return false;
              }
              jobs.jobInsertIfAbsent(
                  c,
                  new NewJob(
                      cron.queue(),
                      cron.payloadJson(),
                      EnqueueOptions.defaults()
                          .withRunAt(due)
                          .withUniqueKey(runKey(cron.name(), due))));
              return true;
            });
    if (ours) {
      enqueued.incrementAndGet();
      Instant first = schedule.nextAfter(last);
      if (first != null && first.isBefore(due)) {
        LOG.log(
            System.Logger.Level.INFO,
            "pgbus cron ''{0}'' ({1}): runs from {2} to before {3} were missed (no leader ran) and"
                + " are skipped; enqueued the latest, {3}, to queue ''{4}''",
            cron.name(),
            schedule,
            first,
            due,
            cron.queue());
      } else {
        LOG.log(
            System.Logger.Level.DEBUG,
            "pgbus cron ''{0}'' enqueued its run of {1} to queue ''{2}''",
            cron.name(),
            due,
            cron.queue());
      }
    }
    return ours;
  }
}

package io.pgbus.admin;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Reads and acts on jobs for operators: the API behind pgbus's REST admin API and console, and for
 * applications' own tools. Inject it next to {@link io.pgbus.JobQueue}; like enqueue, every call
 * joins the caller's JTA transaction, so an action commits or rolls back with it.
 *
 * <p>Searches page with a keyset (the id of the last job seen), never with an offset, so page 1000
 * costs what page 1 costs. Every action changes only the jobs in the states it applies to (a replay
 * touches only dead jobs, whatever the filter says), returns how many it changed, and writes one
 * {@linkplain io.pgbus.AuditEntry audit entry} per changed job with the caller principal, readable
 * with {@link io.pgbus.JobQueue#history(long)}.
 *
 * <p>Bounds, refused with an {@link InvalidFilterException} naming the field: a page holds 1 to
 * {@value #MAX_PAGE} jobs, a bulk action changes 1 to {@value #MAX_BULK} jobs per call (call again
 * for more: it returns 0 when none are left), and the filters' own bounds are in {@link JobFilter}.
 */
public interface JobAdmin {

  /** The largest page a search returns. */
  int MAX_PAGE = 200;

  /** The most jobs one bulk action changes. */
  int MAX_BULK = 10_000;

  /**
   * Where the per-state counts of {@link #queues()} stop counting the live jobs: a state whose live
   * jobs the database's statistics put at most at this many is counted exactly, reading at most
   * this many plus one index entries; a larger one is not counted, its count is the planner's
   * estimate ({@link QueueStats#estimated()}). The finished jobs in the history are counted exactly
   * at any size. A state the statistics had small but that holds more is this many plus the
   * history's, and means "at least" ({@link QueueStats#capped()}). 100,000 before issue #27.
   */
  long COUNT_CAP = 1_000;

  /** The longest time range one {@link #history} call reads, in days. */
  int MAX_HISTORY_DAYS = 31;

  /** The most points one {@link #history} call returns. */
  int MAX_HISTORY_POINTS = 1_440;

  /** The longest step of {@link #history}, in minutes (a day). */
  int MAX_HISTORY_STEP_MINUTES = 1_440;

  /**
   * How long one search may run before the database cancels it ({@link SearchTimeoutException}), in
   * milliseconds; a lower {@code statement_timeout} of the session stays in force.
   */
  int SEARCH_TIMEOUT_MS = 5_000;

  /**
   * A payload search without {@code createdFrom} looks at the jobs created in this many days before
   * {@code createdTo} (or now).
   */
  int PAYLOAD_WINDOW_DAYS = 7;

  /** The widest creation window a payload search may give, in days. */
  int MAX_PAYLOAD_WINDOW_DAYS = 31;

  /** One job with its payload and errors, or empty when there is no such job. */
  Optional<JobView> job(long id);

  /**
   * The jobs matching {@code filter}, newest (highest id) first. A payload filter looks only at the
   * jobs created in the filter's window: {@value #PAYLOAD_WINDOW_DAYS} days when it gives no {@code
   * createdFrom}, at most {@value #MAX_PAYLOAD_WINDOW_DAYS} days (a wider one is refused). The
   * search runs at most {@value #SEARCH_TIMEOUT_MS} ms.
   *
   * @throws SearchTimeoutException when it ran longer
   * @param before the {@link JobPage#next()} of the previous page, or null for the first page
   * @param limit the page size, 1 to {@value #MAX_PAGE}
   */
  JobPage search(JobFilter filter, Long before, int limit);

  /**
   * Replays dead jobs matching the filter: each becomes available at once with a fresh attempt
   * budget. A dead job whose unique key another job holds (waiting or running) stays dead.
   *
   * @param limit at most this many jobs, newest first, 1 to {@value #MAX_BULK}
   * @return how many jobs were replayed
   */
  int replayDead(JobFilter filter, int limit);

  /**
   * Makes waiting jobs (scheduled or retryable) matching the filter available now, without changing
   * their attempts.
   *
   * @return how many jobs were moved
   */
  int retryNow(JobFilter filter, int limit);

  /**
   * Cancels jobs that wait to run (scheduled, available or retryable) matching the filter. A
   * running job is not touched: it finishes or fails on its own.
   *
   * @return how many jobs were cancelled
   */
  int cancelWaiting(JobFilter filter, int limit);

  /**
   * Moves one waiting job (scheduled, available or retryable): a new run time, a new priority, or
   * both ({@code null} leaves one as it is), audited as {@code replace}. A running or finished job
   * is never changed: that is an {@link InvalidFilterException} (field {@code id}) naming its state
   * and the fix. The database holds the bounds of the enqueue (run time at most 100 years ahead,
   * priority -100 to 100). Its payload is the application's to replace, by enqueueing with the
   * job's unique key and {@code EnqueueOptions.replacing}.
   *
   * @return false when there is no such job
   */
  boolean replaceWaiting(long id, Instant runAt, Integer priority);

  /**
   * Deletes finished jobs (completed, dead or cancelled) matching the filter.
   *
   * @return how many jobs were deleted
   */
  int deleteFinished(JobFilter filter, int limit);

  /**
   * Every queue that has jobs, is paused, or is read by a capsule of this application, by name,
   * with its counts per state (the live jobs counted up to {@link #COUNT_CAP}, estimated past it),
   * the wait of its oldest due job and its pause.
   */
  List<QueueStats> queues();

  /** Jobs finished per queue and minute over the last hour, oldest minute first. */
  List<Throughput> throughput();

  /**
   * Why the job is in its state, with evidence, the action that would unblock it and when it
   * resolves by itself (SQL: {@code pgbus.explain(id)}; docs/explain.md). It only reads.
   *
   * @return empty when there is no such job (also one deleted on completion or pruned)
   */
  Optional<Explanation> explain(long id);

  /**
   * Per queue, its waiting jobs, how many could be claimed now if slots were free, and how many
   * each cause holds back (SQL: {@code pgbus.queue_blockers(queue)}). One statement over each
   * queue's waiting jobs: meant for operators and autoscalers, not for a loop.
   *
   * @param queue one queue, or null for every queue that has waiting jobs, is paused or has limits
   * @throws io.pgbus.InvalidJobException when {@code queue} is not a valid queue name
   */
  List<QueueBlockers> blockers(String queue);

  /**
   * The per-minute history the maintenance leader keeps (for {@code pgbus.history.retention}, 7
   * days by default): one point per {@code step} from {@code from} to {@code to}, oldest first, a
   * step without jobs with zero counts and no timings. The minutes still being written (the current
   * one and the one before) are not in it yet.
   *
   * @param queue one queue, or null for all queues together
   * @param from the start, inclusive (cut down to a whole step)
   * @param to the end, exclusive; after {@code from} and at most {@value #MAX_HISTORY_DAYS} days
   *     later
   * @param stepMinutes minutes per point, 1 to {@value #MAX_HISTORY_STEP_MINUTES}, so that the
   *     range holds at most {@value #MAX_HISTORY_POINTS} steps
   * @throws InvalidFilterException naming the bad bound
   */
  List<HistoryPoint> history(String queue, Instant from, Instant to, int stepMinutes);

  /**
   * Cancels a whole workflow, as {@link io.pgbus.JobQueue#cancelWorkflow}: audited {@code
   * workflow_cancel}.
   *
   * @return how many members were cancelled or asked to stop; empty when there is no such workflow
   */
  OptionalInt cancelWorkflow(long workflowId);

  /**
   * Retries a whole workflow, as {@link io.pgbus.JobQueue#retryWorkflow}: audited {@code
   * workflow_retry}.
   *
   * @return how many members were replayed or revived; empty when there is no such workflow
   */
  OptionalInt retryWorkflow(long workflowId);
}

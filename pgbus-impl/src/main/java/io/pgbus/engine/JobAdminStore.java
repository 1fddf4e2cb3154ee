package io.pgbus.engine;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.admin.QueueStats;
import io.pgbus.admin.SearchTimeoutException;
import io.pgbus.admin.Throughput;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The operator's SQL on {@code pgbus.job} (search, read one, bulk actions, queue counts,
 * throughput), written like {@link JobStore}: bind parameters only, nothing resolved through the
 * application's search_path. Runs on the connection it is given, in the caller's transaction.
 *
 * <p>The reads of jobs that may have finished (search, read one, counts, throughput, the queue
 * list, delete) read {@code pgbus.job_all}, pgbus.job and pgbus.job_history together (V33): each
 * walk becomes a merge of the same index's ranges, one per table or day partition. The actions on
 * waiting and dead jobs (replay, retry, cancel) stay on pgbus.job, where those jobs are.
 *
 * <p>Every statement here runs only when an operator asks: nothing is polled.
 *
 * <p>Why the searches are fast on a million jobs (V8__admin.sql, docs/performance.md): a search
 * walks the jobs of each wanted state newest first, on {@code job_queue_state_idx (queue, state,
 * id)} (for each queue that has jobs when none is given), each walk stopping after a page, and
 * merges the walks; no sort of a whole queue, no OFFSET. The filters are written {@code (? IS NULL
 * OR ...)}: PostgreSQL plans each execution with the values (custom plans, forced for the search:
 * see LIMIT_TIME), which folds the unset filters away and lets the index conditions through.
 */
public final class JobAdminStore {

  private static final String COLUMNS =
      """
      j.id, j.queue::text, j.state::text, j.priority, j.attempt, j.max_attempts, j.run_at,
      j.created_at, j.attempted_at, j.finalized_at, j.attempted_by, j.lease_expires_at,
      j.unique_key, j.enqueued_by, j.correlation_id,
      (j.errors OPERATOR(pg_catalog.->) 0) OPERATOR(pg_catalog.->>) 'error'::text,
      j.progress::text, j.attempt_base
      """;

  // The filter of JobFilter on alias j; bound by bindFilter, 22 parameters in this order. The last
  // line repeats createdFrom on finalized_at, which a job reaches after it was created (an hour of
  // slack for a clock stepped back): redundant for the rows, it lets a custom plan prune the
  // history's
  // day partitions that ended before the window (partitioned by finalized_at, not created_at),
  // which
  // a time search otherwise walks whole, newest id first, to find none (issue #27; 175 -> 4 ms at
  // 1M jobs, docs/performance.md). The error
  // filter (issue #29) reads the latest error of each job the others leave, without an index:
  // bounded like a payload filter by its creation window and the search's timeout.
  private static final String FILTER =
      """
          (?::bigint IS NULL OR j.id = ?::bigint)
      AND (?::bigint[] IS NULL OR j.id = ANY (?::bigint[]))
      AND (?::text IS NULL OR pg_catalog.strpos(pg_catalog.lower(
             (j.errors OPERATOR(pg_catalog.->) 0) OPERATOR(pg_catalog.->>) 'error'::text),
             pg_catalog.lower(?::text)) OPERATOR(pg_catalog.>) 0)
      AND (?::text IS NULL OR j.queue::text = ?::text)
      AND (?::text[] IS NULL OR j.queue::text = ANY (?::text[]))
      AND (?::pgbus.job_state[] IS NULL OR j.state OPERATOR(pg_catalog.=) ANY (?::pgbus.job_state[]))
      AND (?::text IS NULL OR j.unique_key::text = ?::text)
      AND (?::jsonb IS NULL OR j.payload OPERATOR(pg_catalog.@>) ?::jsonb)
      AND (?::timestamptz IS NULL OR j.created_at >= ?::timestamptz)
      AND (?::timestamptz IS NULL OR j.created_at < ?::timestamptz)
      AND (?::timestamptz IS NULL OR j.finalized_at IS NULL
           OR j.finalized_at >= ?::timestamptz - interval '1 hour')
      """;

  // Every queue that has jobs, as q(queue): a loose index scan over job_queue_state_idx, one probe
  // per queue, instead of reading a million rows for a DISTINCT. The last row is NULL.
  private static final String QUEUE_LIST =
      """
      WITH RECURSIVE q(queue) AS (
        (SELECT j.queue::text FROM pgbus.job_all j ORDER BY j.queue LIMIT 1)
        UNION ALL
        SELECT (SELECT j.queue::text FROM pgbus.job_all j
                 WHERE j.queue::text > q.queue ORDER BY j.queue LIMIT 1)
          FROM q WHERE q.queue IS NOT NULL)
      """;

  // One walk per wanted state (s), each newest first and stopping at the page size, merged; then
  // the page's rows. The walks read ids only: an index-only range of job_queue_state_idx (queue,
  // state, id) each. Planner trap: a walk that read whole rows could be planned on the primary key
  // instead (newest first, filtered by queue and state), cheap for a common state and a read of a
  // million rows for a rare one, since the plan cannot know which state the walk gets.
  private static final String SEARCH =
      "SELECT "
          + COLUMNS
          + """
        FROM pgbus.job_all j
       WHERE j.id IN (
         SELECT w.id FROM pg_catalog.unnest(?::pgbus.job_state[]) AS s(state)
          CROSS JOIN LATERAL (
            SELECT j.id FROM pgbus.job_all j
             WHERE j.state OPERATOR(pg_catalog.=) s.state AND j.id < ?::bigint AND
      """
          + FILTER
          + """
             ORDER BY j.id DESC
             LIMIT ?) w
          ORDER BY w.id DESC
          LIMIT ?)
       ORDER BY j.id DESC
      """;

  // States without a queue: the same walks for each queue that has jobs, so that no index of its
  // own on (state, id) has to be kept up by every enqueue and completion.
  private static final String SEARCH_ALL_QUEUES =
      QUEUE_LIST
          + "SELECT "
          + COLUMNS
          + """
        FROM pgbus.job_all j
       WHERE j.id IN (
         SELECT w.id FROM q
          CROSS JOIN pg_catalog.unnest(?::pgbus.job_state[]) AS s(state)
          CROSS JOIN LATERAL (
            SELECT j.id FROM pgbus.job_all j
             WHERE j.queue::text = q.queue AND j.state OPERATOR(pg_catalog.=) s.state
               AND j.id < ?::bigint AND
      """
          + FILTER
          + """
             ORDER BY j.id DESC
             LIMIT ?) w
          -- A handler's queues: only their walks run (a walk of another queue would read all of
          -- its jobs of the state to find none).
          WHERE q.queue IS NOT NULL AND (?::text[] IS NULL OR q.queue = ANY (?::text[]))
          ORDER BY w.id DESC
          LIMIT ?)
       ORDER BY j.id DESC
      """;

  // With an id, a unique key, a payload or a time filter: one plain query over all wanted states,
  // so that PostgreSQL may answer it from the primary key, job_unique_key_idx, job_dead_payload_idx
  // (GIN, dead jobs only: the state list must be exactly
  // {dead} for the partial index to apply) or job_created_idx and sort the few matches, rather
  // than walk every job of the states and test each one. Without such an index (a payload filter
  // on other states) it walks the states newest first like SEARCH.
  private static final String SEARCH_MATCHING =
      "SELECT "
          + COLUMNS
          + """
           FROM pgbus.job_all j
          WHERE j.state OPERATOR(pg_catalog.=) ANY (?::pgbus.job_state[]) AND j.id < ?::bigint AND
      """
          + FILTER
          + """
          ORDER BY j.id DESC
          LIMIT ?
      """;

  private static final String ONE =
      "SELECT "
          + COLUMNS
          + """
          , j.payload::text, j.errors::text, j.result::text, j.batch_id,
            (SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                      'job', d.depends_on, 'state', d.state, 'onFailure', d.on_failure)
                    ORDER BY d.depends_on)
               FROM pgbus.job_dependency d WHERE d.job_id = j.id)::text,
            j.start_by,
            (SELECT w.workflow_id FROM pgbus.workflow_job w WHERE w.job_id = j.id)
            FROM pgbus.job_all j WHERE j.id = ?::bigint
          """;

  // The bulk actions. picked: the newest matching jobs in the action's states, locked; a job that
  // another transaction holds (being claimed, completed, acted on) is skipped, so a bulk action
  // never waits on the workers. The write rechecks the state on the row it changes. Each changed
  // job gets an audit row in the same statement (pgbus.audit, V7; actions of V8), and a queue with
  // jobs made available gets one wake-up.
  private static final String PICKED =
      """
      WITH picked AS (
        SELECT j.id, j.queue::text AS queue, j.unique_key FROM pgbus.job j
         WHERE j.state OPERATOR(pg_catalog.=) ANY (?::pgbus.job_state[]) AND
      """
          + FILTER
          + """
         ORDER BY j.id DESC
         LIMIT ?
         FOR UPDATE SKIP LOCKED)
      """;

  private static final String AUDITED =
      """
      , audited AS (
        INSERT INTO pgbus.audit (actor, action, queue, job_id)
        SELECT coalesce(nullif(?::text, ''), session_user::text), ?::text, queue::text, id FROM acted)
      """;

  // As JobStore.REPLAY_DEAD (a fresh start: the enqueued budget from attempt_base on, V30), for
  // many: one job per unique key at most (the newest), and none
  // whose key another job holds, so the replay never meets job_unique_idx.
  private static final String REPLAY_SQL =
      PICKED
          + """
      , acted AS (
        UPDATE pgbus.job d
           SET state = 'available', run_at = now(), finalized_at = NULL, batch_id = NULL,
               max_attempts = d.attempt + (d.max_attempts::integer - d.attempt_base),
               attempt_base = d.attempt
          FROM (SELECT p.id, p.unique_key, pg_catalog.row_number() OVER (
                         PARTITION BY p.queue, p.unique_key ORDER BY p.id DESC) AS nth
                  FROM picked p) p
         WHERE d.id = p.id AND d.state OPERATOR(pg_catalog.=) 'dead'
           AND (d.unique_key IS NULL OR (p.nth = 1 AND NOT EXISTS (
                 SELECT 1 FROM pgbus.job o
                  WHERE o.queue::text = d.queue::text AND o.unique_key::text = d.unique_key::text
                    AND o.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}'))))
        RETURNING d.id, d.queue)
      """
          + AUDITED
          + """
      SELECT (SELECT count(*) FROM acted),
             (SELECT count(*) FROM (SELECT pgbus.notify(queue, now()) FROM acted GROUP BY queue) n)
      """;

  private static final String RETRY_SQL =
      PICKED
          + """
      , acted AS (
        UPDATE pgbus.job d SET state = 'available', run_at = now()
          FROM picked p
         WHERE d.id = p.id AND d.state OPERATOR(pg_catalog.=) ANY ('{scheduled,retryable}')
           -- A job waiting on dependencies (V16) runs only when they completed.
           AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency w
                            WHERE w.job_id = d.id AND w.state <> 'completed')
        RETURNING d.id, d.queue)
      """
          + AUDITED
          + """
      SELECT (SELECT count(*) FROM acted),
             (SELECT count(*) FROM (SELECT pgbus.notify(queue, now()) FROM acted GROUP BY queue) n)
      """;

  private static final String CANCEL_SQL =
      PICKED
          + """
      , acted AS (
        UPDATE pgbus.job d SET state = 'cancelled', finalized_at = now()
          FROM picked p
         WHERE d.id = p.id AND d.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,retryable}')
        RETURNING d.id, d.queue, d.linked)
      """
          + AUDITED
          + """
      SELECT (SELECT count(*) FROM acted), 0,
             (SELECT pg_catalog.array_agg(id) FROM acted WHERE linked)
      """;

  // Finished jobs are in pgbus.job or, once moved, in pgbus.job_history (V33): picked from both
  // without a lock (a view of a UNION cannot lock; no worker holds a finished job), deleted from
  // each with the state rechecked. A job the leader moves meanwhile is skipped by both deletes
  // (gone from the one, not yet visible in the other): the count says so, and a repeat takes it.
  private static final String DELETE_SQL =
      """
      WITH picked AS (
        SELECT j.id FROM pgbus.job_all j
         WHERE j.state OPERATOR(pg_catalog.=) ANY (?::pgbus.job_state[]) AND
      """
          + FILTER
          + """
         ORDER BY j.id DESC
         LIMIT ?)
      , acted_live AS (
        DELETE FROM pgbus.job d
         USING picked p
         WHERE d.id = p.id AND d.state OPERATOR(pg_catalog.=) ANY ('{completed,dead,cancelled}')
        RETURNING d.id, d.queue)
      , acted_history AS (
        DELETE FROM pgbus.job_history d
         USING picked p
         WHERE d.id = p.id
        RETURNING d.id, d.queue)
      , acted AS (
        SELECT id, queue FROM acted_live UNION ALL SELECT id, queue FROM acted_history)
      """
          + AUDITED
          + """
      SELECT (SELECT count(*) FROM acted), 0
      """;

  // Every queue that has jobs: a loose index scan over job_queue_state_idx, one probe per queue,
  // instead of reading a million rows for a DISTINCT.
  private static final String QUEUES = QUEUE_LIST + "SELECT queue FROM q WHERE queue IS NOT NULL";

  // Counts per queue and state, in work bounded at any size of the live table (issue #27). The
  // live table's part: first the planner's estimate of the pair (3rd column,
  // pgbus.job_count_estimate: an EXPLAIN, no row read; V58's statistics of the pairs). Only a pair
  // estimated at no more than the cap is counted (4th column, NULL otherwise): an index-only range
  // of job_queue_state_idx stopping one past the cap (so a count of exactly the cap is still
  // exact); the default history partition's (5th; empty unless rows were written by hand) is
  // capped the same way. So a request reads at most cap + 1 entries per pair, however stale the
  // visibility map (a range fetches the heap for each entry on a page changed since the last
  // vacuum: 1.5 s for 250,000 entries, docs/performance.md, "Admin queries"), and none of a large
  // pair, whose count is the estimate, labelled. Completed and cancelled jobs are also in
  // pgbus.job_history (V33: a minute in pgbus.job, then the history), whose part (6th column) is
  // exact: the sum of pgbus.job_history_count (V47, kept by triggers on every write) over the day
  // partitions that exist, a few rows per day.
  // Until the leader has recounted every day partition once (right after the upgrade to V47), the
  // 7th column is false and the history's part is the capped index range of before. The other
  // states never read history. Each table is named rather than read through pgbus.job_all: with
  // the state a value of the row being counted, the view's plan reads both tables for every pair.
  private static final String COUNTS =
      """
      WITH parts AS (
        SELECT i.inhrelid AS part,
               c.relname::text OPERATOR(pg_catalog.~) '^job_history_p[0-9]{8}$' AS day,
               EXISTS (SELECT 1 FROM pgbus.job_history_counted k
                        WHERE k.part OPERATOR(pg_catalog.=) i.inhrelid) AS counted
          FROM pg_catalog.pg_inherits i
          JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) i.inhrelid
         WHERE i.inhparent OPERATOR(pg_catalog.=) 'pgbus.job_history'::pg_catalog.regclass
      ), exact AS (
        SELECT coalesce(pg_catalog.bool_and(p.counted) FILTER (WHERE p.day), true) AS whole
          FROM parts p
      ), history AS (
        SELECT c.queue, c.state, pg_catalog.sum(c.jobs) AS jobs
          FROM pgbus.job_history_count c
          JOIN parts p ON p.part OPERATOR(pg_catalog.=) c.part AND p.day
         WHERE c.queue OPERATOR(pg_catalog.=) ANY (?::text[])
         GROUP BY 1, 2
      )
      SELECT q.queue, s.state::text, e.estimate,
             CASE WHEN e.estimate OPERATOR(pg_catalog.<=) ?::bigint THEN
               (SELECT count(*) FROM (SELECT 1 FROM pgbus.job j
                                       WHERE j.queue::text = q.queue AND j.state OPERATOR(pg_catalog.=) s.state
                                       LIMIT ?) x)
             END,
             CASE WHEN s.state OPERATOR(pg_catalog.=) ANY ('{completed,cancelled}')
                       AND (SELECT e.whole FROM exact e)
                  THEN (SELECT count(*) FROM (SELECT 1 FROM pgbus.job_history_default d
                                               WHERE d.queue::text = q.queue AND d.state OPERATOR(pg_catalog.=) s.state
                                               LIMIT ?) z)
                  ELSE 0 END,
             CASE WHEN s.state OPERATOR(pg_catalog.<>) ALL ('{completed,cancelled}') THEN 0
                  WHEN (SELECT e.whole FROM exact e)
                  THEN coalesce((SELECT h.jobs FROM history h
                                  WHERE h.queue OPERATOR(pg_catalog.=) q.queue
                                    AND h.state OPERATOR(pg_catalog.=) s.state), 0)
                  ELSE (SELECT count(*) FROM (SELECT 1 FROM pgbus.job_history h
                                               WHERE h.queue::text = q.queue AND h.state OPERATOR(pg_catalog.=) s.state
                                               LIMIT ?) y)
             END,
             (SELECT e.whole FROM exact e)
        FROM pg_catalog.unnest(?::text[]) AS q(queue)
       CROSS JOIN pg_catalog.unnest(pg_catalog.enum_range(NULL::pgbus.job_state)) AS s(state)
       CROSS JOIN LATERAL (SELECT pgbus.job_count_estimate(q.queue, s.state) AS estimate) e
      """;

  // The wait of each queue's oldest due job: pgbus.queue_head (job_claim_idx, one probe per
  // priority level; V40).
  private static final String OLDEST =
      """
      SELECT q.queue,
             (SELECT GREATEST(0::numeric, extract(epoch FROM now() - h.run_at) * 1000::numeric)::bigint
                FROM (SELECT pgbus.queue_head(q.queue) AS run_at) h),
             EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = q.queue)
        FROM pg_catalog.unnest(?::text[]) AS q(queue)
      """;

  private static final String PAUSED = "SELECT queue::text FROM pgbus.queue_pause";

  // Finished jobs of the last hour, from job_finalized_queue_idx (state, finalized_at) INCLUDE
  // (queue): an index-only range where vacuum has been.
  private static final String THROUGHPUT =
      """
      SELECT j.queue::text, pg_catalog.date_trunc('minute', j.finalized_at) AS minute,
             count(*) FILTER (WHERE j.state OPERATOR(pg_catalog.=) 'completed'),
             count(*) FILTER (WHERE j.state OPERATOR(pg_catalog.=) 'dead')
        FROM pgbus.job_all j
       WHERE j.state OPERATOR(pg_catalog.=) ANY ('{completed,dead}')
         AND j.finalized_at >= now() - interval '1 hour'
       GROUP BY 1, 2
       ORDER BY 2, 1
      """;

  // The search's statement timeout (issue #23): the lower of the session's (0: none) and the
  // search's own, set for the session and put back after the search. Session-level rather than
  // SET LOCAL, so that it holds on a connection in auto-commit too; inside a transaction a
  // failed search rolls the setting back with it. The previous value comes back in milliseconds.
  //
  // With it, plan_cache_mode = force_custom_plan, put back the same way (issue #27: the time search
  // over job_all took p95 346 ms against 2.3 ms with literals). pgjdbc turns a statement it has run
  // 5 times (prepareThreshold) into a named server-side one, and PostgreSQL's plan cache then
  // switches to a generic plan when its estimate looks no dearer than the custom plans so far. A
  // generic plan of these searches cannot fold the unset (? IS NULL OR ...) filters away, so it
  // reads every partition's job_created_idx-less path; a custom plan, made with the values, keeps
  // only the set filters and their index ranges (docs/performance.md, "Admin queries").
  //
  // And jit = off, put back the same way: the planner estimates the page's `id IN (...)` over
  // job_all at every row of the view (a million rows' cost for 51), which passes jit_above_cost:
  // JIT compiled 103 functions for a 37 ms walk (+50 ms at 4M history rows), and at 10M history
  // rows the search of one queue ran past its 5 s timeout in the bench.
  private static final String LIMIT_TIME =
      """
      SELECT s.setting, pg_catalog.set_config('statement_timeout',
               CASE WHEN s.setting OPERATOR(pg_catalog.=) '0'::text THEN ?::integer
                    ELSE LEAST(s.setting::integer, ?::integer) END::text, false),
             p.setting, pg_catalog.set_config('plan_cache_mode', 'force_custom_plan', false),
             x.setting, pg_catalog.set_config('jit', 'off', false)
        FROM pg_catalog.pg_settings s, pg_catalog.pg_settings p, pg_catalog.pg_settings x
       WHERE s.name OPERATOR(pg_catalog.=) 'statement_timeout'::text
         AND p.name OPERATOR(pg_catalog.=) 'plan_cache_mode'::text
         AND x.name OPERATOR(pg_catalog.=) 'jit'::text
      """;

  private static final String RESTORE_TIME =
      """
      SELECT pg_catalog.set_config('statement_timeout', ?::text, false),
             pg_catalog.set_config('plan_cache_mode', ?::text, false),
             pg_catalog.set_config('jit', ?::text, false)
      """;

  private final int searchTimeoutMs;

  /** The store with the documented search timeout, {@link JobAdmin#SEARCH_TIMEOUT_MS}. */
  public JobAdminStore() {
    this(JobAdmin.SEARCH_TIMEOUT_MS);
  }

  JobAdminStore(int searchTimeoutMs) {
    if (searchTimeoutMs < 1) {
      throw new IllegalArgumentException(
          "search timeout " + searchTimeoutMs + " ms: use 1 or more");
    }
    this.searchTimeoutMs = searchTimeoutMs;
  }

  /** One job with payload and errors. */
  public Optional<JobView> jobView(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ONE)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(view(rs, true)) : Optional.empty();
      }
    }
  }

  /**
   * A page of the search, newest first; see {@link JobAdmin#search}: a payload filter within its
   * creation window, the whole search within its statement timeout.
   *
   * @throws SearchTimeoutException when the database cancelled it at the timeout
   */
  public JobPage jobSearch(Connection c, JobFilter filter, Long before, int limit)
      throws SQLException {
    requireRange("limit", limit, 1, JobAdmin.MAX_PAGE);
    if (before != null && before < 1) {
      throw new InvalidFilterException("before", before, "use the next cursor of a page");
    }
    JobFilter bounded = payloadWindow(filter, Instant.now());
    String[] previous = limitTime(c);
    boolean ok = false;
    try {
      JobPage page = search(c, bounded, before, limit);
      ok = true;
      return page;
    } catch (SQLException e) {
      if ("57014".equals(e.getSQLState())) {
        throw new SearchTimeoutException(
            "the job search ran past its "
                + searchTimeoutMs
                + " ms and was cancelled: narrow it with a queue, a state, or a shorter window"
                + " (createdFrom, createdTo)",
            e);
      }
      throw e;
    } finally {
      restoreTime(c, previous, ok);
    }
  }

  /** Puts back what {@link #limitTime} changed. */
  private static void restoreTime(Connection c, String[] previous, boolean ok) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESTORE_TIME)) {
      ps.setString(1, previous[0]);
      ps.setString(2, previous[1]);
      ps.setString(3, previous[2]);
      ps.execute();
    } catch (SQLException e) {
      // In a transaction the read's failure aborted, whose rollback restores the setting.
      if (ok) {
        throw e;
      }
    }
  }

  /**
   * The filter a search runs with: a payload or error filter (a scan of the jobs the other filters
   * leave, so of every job when they leave all) only over a bounded creation window, {@link
   * JobAdmin#PAYLOAD_WINDOW_DAYS} before {@code createdTo} (or now) unless {@code createdFrom} is
   * given, and never wider than {@link JobAdmin#MAX_PAYLOAD_WINDOW_DAYS}.
   */
  static JobFilter payloadWindow(JobFilter f, Instant now) {
    if (f.payloadContains() == null && f.errorContains() == null) {
      return f;
    }
    Instant end = f.createdTo() == null ? now : f.createdTo();
    Instant from =
        f.createdFrom() != null
            ? f.createdFrom()
            : end.minus(Duration.ofDays(JobAdmin.PAYLOAD_WINDOW_DAYS));
    if (Duration.between(from, end).compareTo(Duration.ofDays(JobAdmin.MAX_PAYLOAD_WINDOW_DAYS))
        > 0) {
      throw new InvalidFilterException(
          "createdFrom",
          from,
          "a payload or error search looks at most "
              + JobAdmin.MAX_PAYLOAD_WINDOW_DAYS
              + " days of jobs: give createdFrom and createdTo (default now) at most "
              + JobAdmin.MAX_PAYLOAD_WINDOW_DAYS
              + " days apart");
    }
    return f.withCreated(from, f.createdTo());
  }

  /**
   * Sets the search's statement timeout, custom plans and no JIT; the session's previous timeout
   * (in milliseconds), plan_cache_mode and jit.
   */
  private String[] limitTime(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(LIMIT_TIME)) {
      ps.setInt(1, searchTimeoutMs);
      ps.setInt(2, searchTimeoutMs);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new String[] {rs.getString(1), rs.getString(3), rs.getString(5)};
      }
    }
  }

  private JobPage search(Connection c, JobFilter filter, Long before, int limit)
      throws SQLException {
    Set<JobState> states =
        filter.states() == null ? EnumSet.allOf(JobState.class) : filter.states();
    // Which walk: see SEARCH, SEARCH_ALL_QUEUES and SEARCH_MATCHING. Without any filter the plain
    // query walks the primary key. An error filter has no index: it takes the walks of the wanted
    // states, which read only their rows (the plain query walked every job's primary key entry
    // for a rare text: 1M rows for 100,000 dead ones, docs/performance.md).
    boolean matching =
        filter.id() != null
            || filter.ids() != null
            || filter.uniqueKey() != null
            || filter.payloadContains() != null
            || filter.createdFrom() != null
            || filter.createdTo() != null
            || (filter.queue() == null && filter.queues() == null && filter.states() == null);
    String sql = matching ? SEARCH_MATCHING : filter.queue() == null ? SEARCH_ALL_QUEUES : SEARCH;
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, states(states), Types.OTHER);
      ps.setLong(2, before == null ? Long.MAX_VALUE : before);
      int i = bindFilter(c, ps, 3, filter);
      ps.setInt(i, limit + 1);
      if (sql.equals(SEARCH_ALL_QUEUES)) {
        Object queues =
            filter.queues() == null ? null : c.createArrayOf("text", filter.queues().toArray());
        i = bindTwice(ps, i + 1, queues, Types.ARRAY);
        ps.setInt(i, limit + 1);
      } else if (!matching) {
        ps.setInt(i + 1, limit + 1);
      }
      var jobs = new ArrayList<JobView>(limit + 1);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          jobs.add(view(rs, false));
        }
      }
      if (jobs.size() > limit) {
        jobs.remove(limit);
        return new JobPage(jobs, jobs.get(limit - 1).id());
      }
      return new JobPage(jobs, null);
    }
  }

  /** Which bulk action, with its SQL and the states it applies to. */
  public enum Action {
    REPLAY("replay", REPLAY_SQL, EnumSet.of(JobState.DEAD)),
    RETRY("retry", RETRY_SQL, EnumSet.of(JobState.SCHEDULED, JobState.RETRYABLE)),
    CANCEL(
        "cancel",
        CANCEL_SQL,
        EnumSet.of(JobState.SCHEDULED, JobState.AVAILABLE, JobState.RETRYABLE)),
    DELETE("delete", DELETE_SQL, EnumSet.of(JobState.COMPLETED, JobState.DEAD, JobState.CANCELLED));

    private final String auditName;
    private final String sql;
    private final Set<JobState> states;

    Action(String auditName, String sql, Set<JobState> states) {
      this.auditName = auditName;
      this.sql = sql;
      this.states = states;
    }

    /** The name in pgbus.audit.action. */
    public String auditName() {
      return auditName;
    }
  }

  /**
   * Runs a bulk action on up to {@code limit} jobs matching the filter, newest first, audited as
   * {@code actor} ({@code null}: the database role); the number of jobs changed.
   */
  public int jobAct(Connection c, Action action, JobFilter filter, int limit, String actor)
      throws SQLException {
    requireRange("limit", limit, 1, JobAdmin.MAX_BULK);
    // The window of a search by payload or error text bounds the action too: it changes what the
    // same search lists (the console counts it for its confirmation), and scans no more.
    JobFilter bounded = payloadWindow(filter, Instant.now());
    try (PreparedStatement ps = c.prepareStatement(action.sql)) {
      ps.setObject(1, states(action.states), Types.OTHER);
      int i = bindFilter(c, ps, 2, bounded);
      ps.setInt(i, limit);
      ps.setString(i + 1, actor);
      ps.setString(i + 2, action.auditName);
      int acted;
      var ended = new ArrayList<Long>();
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        acted = rs.getInt(1);
        if (rs.getMetaData().getColumnCount() > 2 && rs.getArray(3) != null) {
          ended.addAll(List.of((Long[]) rs.getArray(3).getArray()));
        }
      }
      // Cancelled jobs in a batch or with dependents are reported in the same transaction (V16).
      JobStore.jobFinished(c, ended);
      return acted;
    }
  }

  /**
   * Every queue with jobs, paused, or in {@code known}, by name, with its counts (the live jobs of
   * a state exact up to {@code cap} where the planner's statistics put them at most at {@code cap},
   * else its estimate, marked estimated; one the statistics had small but past {@code cap} is
   * {@code cap}, marked capped; the history's exact), the wait of its oldest due job and its pause.
   */
  public List<QueueStats> queueStats(Connection c, Collection<String> known, long cap)
      throws SQLException {
    var queues = new TreeSet<String>(known);
    try (PreparedStatement ps = c.prepareStatement(QUEUES);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        queues.add(rs.getString(1));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(PAUSED);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        queues.add(rs.getString(1));
      }
    }
    String[] names = queues.toArray(String[]::new);
    var counts = new TreeMap<String, Map<JobState, Long>>();
    var capped = new TreeMap<String, Set<JobState>>();
    var estimated = new TreeMap<String, Set<JobState>>();
    // The counts under the search's settings (LIMIT_TIME): their estimate passes jit_above_cost,
    // and JIT compiled 109 functions for a 20 ms statement.
    String[] previous = limitTime(c);
    boolean ok = false;
    try (PreparedStatement ps = c.prepareStatement(COUNTS)) {
      Array queueNames = c.createArrayOf("text", names);
      ps.setArray(1, queueNames);
      ps.setLong(2, cap);
      ps.setLong(3, cap + 1);
      ps.setLong(4, cap + 1);
      ps.setLong(5, cap + 1);
      ps.setArray(6, queueNames);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String q = rs.getString(1);
          JobState s = JobState.parse(rs.getString(2));
          long live = rs.getLong(4);
          Long counted = rs.wasNull() ? null : live;
          Count n =
              Count.of(rs.getLong(3), counted, rs.getLong(5), rs.getLong(6), rs.getBoolean(7), cap);
          counts.computeIfAbsent(q, k -> new EnumMap<>(JobState.class)).put(s, n.jobs());
          Set<JobState> full = capped.computeIfAbsent(q, k -> EnumSet.noneOf(JobState.class));
          Set<JobState> guessed = estimated.computeIfAbsent(q, k -> EnumSet.noneOf(JobState.class));
          if (n.capped()) {
            full.add(s);
          }
          if (n.estimated()) {
            guessed.add(s);
          }
        }
      }
      ok = true;
    } finally {
      restoreTime(c, previous, ok);
    }
    var stats = new ArrayList<QueueStats>(names.length);
    try (PreparedStatement ps = c.prepareStatement(OLDEST)) {
      ps.setArray(1, c.createArrayOf("text", names));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String q = rs.getString(1);
          long waitedMs = rs.getLong(2);
          stats.add(
              new QueueStats(
                  q,
                  counts.getOrDefault(q, Map.of()),
                  capped.getOrDefault(q, Set.of()),
                  estimated.getOrDefault(q, Set.of()),
                  Duration.ofMillis(waitedMs),
                  rs.getBoolean(3)));
        }
      }
    }
    return stats;
  }

  /** Finished jobs per queue and minute over the last hour, oldest minute first. */
  public List<Throughput> throughput(Connection c) throws SQLException {
    var points = new ArrayList<Throughput>();
    try (PreparedStatement ps = c.prepareStatement(THROUGHPUT);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        points.add(
            new Throughput(
                rs.getString(1),
                rs.getObject(2, OffsetDateTime.class).toInstant(),
                rs.getLong(3),
                rs.getLong(4)));
      }
    }
    return points;
  }

  private static int bindFilter(Connection c, PreparedStatement ps, int at, JobFilter f)
      throws SQLException {
    int i = at;
    i = bindTwice(ps, i, f.id(), Types.BIGINT);
    Object ids = f.ids() == null ? null : c.createArrayOf("int8", f.ids().toArray());
    i = bindTwice(ps, i, ids, Types.ARRAY);
    i = bindTwice(ps, i, f.errorContains(), Types.VARCHAR);
    i = bindTwice(ps, i, f.queue(), Types.VARCHAR);
    // A handler's queues (the admin API's search by handler).
    Object queues = f.queues() == null ? null : c.createArrayOf("text", f.queues().toArray());
    i = bindTwice(ps, i, queues, Types.ARRAY);
    String states = f.states() == null ? null : states(f.states());
    ps.setObject(i++, states, Types.OTHER);
    ps.setObject(i++, states, Types.OTHER);
    i = bindTwice(ps, i, f.uniqueKey(), Types.VARCHAR);
    i = bindTwice(ps, i, f.payloadContains(), Types.VARCHAR);
    i = bindTwice(ps, i, timestamp(f.createdFrom()), Types.TIMESTAMP_WITH_TIMEZONE);
    i = bindTwice(ps, i, timestamp(f.createdTo()), Types.TIMESTAMP_WITH_TIMEZONE);
    i = bindTwice(ps, i, timestamp(f.createdFrom()), Types.TIMESTAMP_WITH_TIMEZONE);
    return i;
  }

  private static int bindTwice(PreparedStatement ps, int i, Object value, int type)
      throws SQLException {
    ps.setObject(i, value, type);
    ps.setObject(i + 1, value, type);
    return i + 2;
  }

  /**
   * A queue's count of one state from the planner's estimate of the live table's part, the live
   * part counted ({@code live}, at most {@code cap + 1}; null when the estimate was past the cap
   * and nothing was counted), the default history partition's ({@code unparted}, at most {@code cap
   * + 1}) and the history's part (exact when {@code historyExact}, else capped too).
   */
  record Count(long jobs, boolean capped, boolean estimated) {
    static Count of(
        long estimate, Long live, long unparted, long history, boolean historyExact, long cap) {
      if (live == null) {
        // Large by the statistics: not counted, the estimate plus the other parts, each of those
        // read at most to the cap (a part past it makes the sum a lower bound: capped too).
        return historyExact
            ? new Count(estimate + Math.min(unparted, cap) + history, unparted > cap, true)
            : new Count(estimate + Math.min(history, cap), history > cap, true);
      }
      if (historyExact) {
        // Past the cap in a table read capped (the statistics had it small): at least the cap
        // there, plus the exact history.
        long read = live + unparted;
        return live > cap || unparted > cap
            ? new Count(Math.min(live, cap) + Math.min(unparted, cap) + history, true, false)
            : new Count(read + history, false, false);
      }
      long n = live + history;
      return n > cap ? new Count(cap, true, false) : new Count(n, false, false);
    }
  }

  private static OffsetDateTime timestamp(Instant at) {
    return at == null ? null : at.atOffset(ZoneOffset.UTC);
  }

  /**
   * The states as an array literal, bound untyped ({@code Types.OTHER}) so that the server parses
   * it as {@code pgbus.job_state[]} at bind time: a constant the planner can prove a partial
   * index's predicate with. A text[] cast to job_state[] in the query is not folded (enum_in is
   * stable), so {@code state = 'dead'} indexes would never match.
   */
  private static String states(Collection<JobState> states) {
    return String.join(",", List.of(names(states))).transform(t -> "{" + t + "}");
  }

  private static String[] names(Collection<JobState> states) {
    return states.stream().map(JobState::sqlName).toArray(String[]::new);
  }

  private static void requireRange(String field, int value, int min, int max) {
    if (value < min || value > max) {
      throw new InvalidFilterException(field, value, "use " + min + " to " + max);
    }
  }

  private static JobView view(ResultSet rs, boolean full) throws SQLException {
    return new JobView(
        rs.getLong(1),
        rs.getString(2),
        JobState.parse(rs.getString(3)),
        rs.getInt(4),
        rs.getInt(5),
        rs.getInt(6),
        instant(rs, 7),
        instant(rs, 8),
        instant(rs, 9),
        instant(rs, 10),
        rs.getString(11),
        instant(rs, 12),
        rs.getString(13),
        rs.getString(14),
        rs.getString(15),
        rs.getString(16),
        full ? rs.getString(19) : null,
        full ? rs.getString(20) : null,
        rs.getString(17),
        full ? rs.getString(21) : null,
        full ? rs.getObject(22, Long.class) : null,
        full ? rs.getString(23) : null,
        rs.getInt(18),
        full ? instant(rs, 24) : null,
        full ? rs.getObject(25, Long.class) : null);
  }

  private static Instant instant(ResultSet rs, int column) throws SQLException {
    Timestamp t = rs.getTimestamp(column);
    return t == null ? null : t.toInstant();
  }

  // pgbus.replace_job (R__unique.sql) with who acts set first, in the same statement, for its audit
  // row (pgbus.actor()): the sub-select runs before the call it feeds.
  private static final String REPLACE =
      """
      SELECT pgbus.replace_job(s.id, NULL::jsonb, s.run_at, s.priority)
        FROM (SELECT ?::bigint AS id, ?::timestamptz AS run_at, ?::integer AS priority,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p
              OFFSET 0) s
      """;

  /**
   * Moves one waiting job (run time, priority; null: unchanged) as {@code actor}; false when there
   * is no such job. A running or finished one raises SQLSTATE 55000 naming its state.
   */
  public boolean jobReplace(Connection c, long id, Instant runAt, Integer priority, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REPLACE)) {
      ps.setLong(1, id);
      ps.setObject(
          2,
          runAt == null ? null : OffsetDateTime.ofInstant(runAt, ZoneOffset.UTC),
          Types.TIMESTAMP_WITH_TIMEZONE);
      ps.setObject(3, priority, Types.INTEGER);
      ps.setString(4, actor);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}

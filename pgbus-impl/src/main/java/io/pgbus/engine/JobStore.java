package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
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
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * All SQL on {@code pgbus.job}, as real SQL text with bind parameters. Queue names travel only as
 * bind values and are checked again by the {@code pgbus.queue_name} domain. Every method takes the
 * connection to run on, so the caller decides the transaction: enqueue and settle run in the
 * caller's (or the handler's) transaction, the rest in auto-commit.
 *
 * <p>State changes after a claim are fenced on {@code (id, attempt, state = 'running')}: they
 * return {@code false} when the lease was lost, and the caller must then roll back. The fence
 * compares the state as text ({@code state::pg_catalog.text = 'running'}), which no partial index
 * predicate matches, so the row is always reached by its primary key. With {@code state =
 * 'running'} the planner could prove {@code job_lease_idx}'s predicate and, both estimating one
 * row, chose that smaller index and filtered it by id: harmless while it holds only the running
 * jobs, but a snapshot held elsewhere keeps the entries of every job that ran since, and each
 * completion then walked all of them (issue #15, docs/performance.md "Claim floors").
 *
 * <p>Why the SQL here looks the way it does: it runs on the application's connections, with the
 * application's {@code search_path} (typically {@code "$user", public}). PostgreSQL searches {@code
 * pg_catalog} first, but a function or operator there wins only on an exact match of argument
 * types; for a polymorphic or VARIADIC function ({@code unnest}, {@code jsonb_build_object}), an
 * implicit cast ({@code bigint * interval}) or an unknown literal against an enum ({@code state =
 * 'running'}: pg_catalog has only {@code anyenum = anyenum}), a look-alike in {@code public} with
 * exact types wins and runs with our rights. So every such function is qualified with {@code
 * pg_catalog.}, durations are bound as {@code float8} milliseconds ({@code float8 * interval} is
 * exact), job states are compared with {@code OPERATOR(pg_catalog.=)} (the same operator the
 * partial indexes use, so they still match), and queue names as {@code ::text} (a pgbus.queue_name
 * has no operator of its own; the indexes on it still serve). A multi-argument {@code unnest} in
 * FROM is expanded by the parser into {@code pg_catalog.unnest} calls and needs nothing. The SQL
 * functions called here are pinned or path-independent (R__enqueue.sql); SearchPathHijackTest
 * plants look-alikes for all of it.
 */
public final class JobStore {

  /**
   * How many error entries a job keeps, newest first, unless a store is made with another bound.
   * pgbus.claim (SQL) keeps the same number when it buries an oversized job.
   */
  static final int ERRORS_KEPT = 10;

  private final int errorsKept;

  /** A store whose jobs keep their {@link #ERRORS_KEPT} newest errors. */
  public JobStore() {
    this(ERRORS_KEPT);
  }

  /** A store whose jobs keep their {@code errorsKept} newest errors. */
  JobStore(int errorsKept) {
    if (errorsKept < 1) {
      throw new IllegalArgumentException("errorsKept must be at least 1, was " + errorsKept);
    }
    this.errorsKept = errorsKept;
  }

  /** The longest error text stored per attempt. */
  static final int ERROR_TEXT_LIMIT = 4000;

  // pgbus.enqueue_job (V3; the trace context since V6): with a unique key, a waiting or running
  // duplicate wins and its id
  // comes back with duplicate = true; nothing is inserted or notified, and nothing is raised.
  //
  // Who enqueues (V7): the column defaults of enqueued_by and correlation_id read the
  // transaction-local settings pgbus.principal and pgbus.correlation_id. They are set in the same
  // statement, so that it works in autocommit too: the sub-select (not flattened, it calls volatile
  // functions) produces the queue name the function takes through LATERAL, which makes it run
  // first. '' clears what an earlier enqueue of the transaction set. Without a correlation id of
  // its own, a job enqueued from a handler inherits the handled job's (NewJob.parentJobId).
  // pgbus.run_as likewise feeds run_as (V44): whom the handler runs as, for a queue that runs as
  // the enqueuer (NewJob.runAs), else '' (NULL).
  //
  // The handled job's correlation id is looked up only inside a handler (ENQUEUE_IN_HANDLER):
  // outside one
  // the sub-select is left out, since a sub-plan costs its executor set-up (an index scan of
  // pgbus.job) even when its parameter is NULL, about 3% of an enqueue's instructions
  // (docs/performance.md, "Enqueue at the raw ceiling"). The parameter, always NULL there, keeps
  // its place as a NULL of the id's type.
  private static final String ENQUEUE =
      """
      SELECT e.id, e.duplicate
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p,
                     pg_catalog.set_config('pgbus.run_as', coalesce(?::text, ''), true) AS r,
                     pg_catalog.set_config('pgbus.correlation_id',
                       coalesce(?::text, ?::bigint::text, ''),
                       true) AS c
              OFFSET 0) s,
             LATERAL pgbus.enqueue_job(s.queue, ?::jsonb, coalesce(?, now() + ?::float8 * interval '1 millisecond'), ?, ?, ?,
                             ?, ?, ?) e
      """;

  private static final String ENQUEUE_MANY =
      """
      SELECT t.id
        FROM (SELECT ?::text[] AS queues,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p,
                     pg_catalog.set_config('pgbus.run_as', coalesce(?::text, ''), true) AS r,
                     pg_catalog.set_config('pgbus.correlation_id',
                       coalesce(?::text, ?::bigint::text, ''),
                       true) AS c
              OFFSET 0) s,
             LATERAL pgbus.enqueue_many(
        s.queues,
        ?::text[]::jsonb[],
        ARRAY(SELECT coalesce(t.run_at, now() + t.delay_ms::float8 * interval '1 millisecond')
                FROM unnest(?::text[]::timestamptz[], ?::bigint[]) WITH ORDINALITY AS t(run_at, delay_ms, ord)
               ORDER BY t.ord),
        ?::integer[],
        ?::integer[],
        ?::text[],
        ?::text[],
        ?::text[],
        ?::text[]) AS t(id)
      """;

  // ENQUEUE and ENQUEUE_MANY as a handler runs them: a job without a correlation id of its own
  // inherits the handled job's (NewJob.parentJobId), read in the statement.
  private static final String NO_PARENT = "?::bigint::text";
  private static final String PARENT =
      "(SELECT h.correlation_id FROM pgbus.job h WHERE h.id = ?::bigint)";
  private static final String ENQUEUE_IN_HANDLER = inHandler(ENQUEUE);
  private static final String ENQUEUE_MANY_IN_HANDLER = inHandler(ENQUEUE_MANY);

  // The four again for an enqueue whose wake the Java API sends after the commit (WakeMode
  // COALESCED, AfterCommit): pgbus.wake = 'client' tells the database's commit-time wake to send
  // nothing for this transaction. Set in the same sub-select as who enqueues, so it costs no round
  // trip and holds in auto-commit too.
  private static final String ENQUEUE_CLIENT_WAKE = clientWake(ENQUEUE);
  private static final String ENQUEUE_MANY_CLIENT_WAKE = clientWake(ENQUEUE_MANY);
  private static final String ENQUEUE_IN_HANDLER_CLIENT_WAKE = clientWake(ENQUEUE_IN_HANDLER);
  private static final String ENQUEUE_MANY_IN_HANDLER_CLIENT_WAKE =
      clientWake(ENQUEUE_MANY_IN_HANDLER);

  private static final String WHO_END = "true) AS c\n";

  /** {@code sql} (who enqueues, in a sub-select) that also sets {@code pgbus.wake = 'client'}. */
  static String clientWake(String sql) {
    if (!sql.contains(WHO_END)) {
      throw new IllegalStateException("no sub-select of who enqueues in " + sql);
    }
    return sql.replace(
        WHO_END, "true) AS c, pg_catalog.set_config('pgbus.wake', 'client', true) AS w\n");
  }

  static String inHandler(String sql) {
    if (!sql.contains(NO_PARENT)) {
      throw new IllegalStateException("no correlation parameter in " + sql);
    }
    return sql.replace(NO_PARENT, PARENT);
  }

  /** {@code plain}, or {@code inHandler} for a job enqueued from a handler. */
  private static String forCaller(NewJob job, String plain, String inHandler) {
    return job.parentJobId() == null ? plain : inHandler;
  }

  // Cancel and replay write their audit row (V7) in the same statement, so in the same
  // transaction: a rollback leaves neither.
  private static final String AUDIT_JOB =
      """
      , audited AS (
        INSERT INTO pgbus.audit (actor, action, queue, job_id)
        SELECT coalesce(nullif(?::text, ''), session_user::text), ?, queue::text, id FROM acted)
      """;

  // pgbus.claim_jobs, not pgbus.claim: its result names its columns, so a later release that adds a
  // column to pgbus.job leaves this statement's cached plan valid (issue #27; R__claim.sql). See
  // pgbus.claim_jobs in R__claim.sql for the strict-priority shape and its index, and for the
  // lanes (V19): the executions its jobs are dealt over, which a global limit counts. NULL lanes:
  // each job a lane of its own. A linked job's workflow (V52) is read with it, a primary-key probe
  // of pgbus.workflow_job for linked jobs only, through pgbus.workflow_of: a VOLATILE function,
  // since this statement's snapshot predates the claim's and may miss a fan-out job's membership
  // (see R__workflow.sql); JobContext.workflowId() then costs no read, and the jobs its handler
  // enqueues join the workflow.
  private static final String CLAIM =
      """
      SELECT c.job_id, c.job_queue, c.job_priority, c.job_payload::text, c.job_attempt,
             c.job_max_attempts, c.job_created_at, c.job_run_at, c.job_trace_parent,
             c.job_trace_state, c.job_lane, c.job_attempt_base, c.job_run_as,
             CASE WHEN c.job_linked THEN pgbus.workflow_of(c.job_id) END
        FROM pgbus.claim_jobs(?::text[], ?, ?, ?::float8 * interval '1 millisecond', ?::integer,
                              ?::text[], ?::integer[], ?::text[]::timestamptz[]) c
      """;

  // Every statement that brings a job to a final state returns its linked flag (V16): only a job
  // in a batch, with dependents or with dependencies has it, and only for such a job does the
  // same transaction go on to report the end to pgbus.job_finished (FINISHED). A plain job's
  // completion stays one statement, with no trigger.
  // finalized_at is statement_timestamp(), not now(): the completion runs at the end of the
  // handler's transaction, whose now() is its start, before the handler ran. The history's run
  // time (R__history.sql: finalized_at - attempted_at) needs the end.
  static final String COMPLETE =
      """
      UPDATE pgbus.job
         SET state = 'completed', finalized_at = statement_timestamp(), lease_expires_at = NULL
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING linked
      """;

  // COMPLETE with the handler's result, in the same single statement: used only when a result is
  // given, so result-less completion keeps the statement above. job_result_size_chk (V12) bounds
  // the size again in the database.
  private static final String COMPLETE_WITH_RESULT =
      """
      UPDATE pgbus.job
         SET state = 'completed', finalized_at = statement_timestamp(), lease_expires_at = NULL, result = ?::jsonb
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING linked
      """;

  // The same fence as COMPLETE, for a whole transaction's jobs in one statement: each (id,
  // attempt) pair must still be running, or that row is left alone and the count falls short.
  static final String COMPLETE_MANY =
      """
      UPDATE pgbus.job j
         SET state = 'completed', finalized_at = statement_timestamp(), lease_expires_at = NULL
        FROM unnest(?::bigint[], ?::int[]) AS held(id, attempt)
       WHERE j.id = held.id AND j.attempt = held.attempt AND j.state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING j.id, j.batch_id, j.linked
      """;

  // Completion when completed jobs are not kept (pgbus.retention.completed=0): the same fence,
  // and the row goes at once. Cheaper than the UPDATE, which writes a new row version and index
  // entries that retention would delete later anyway.
  private static final String DELETE_COMPLETED =
      """
      DELETE FROM pgbus.job
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING id, batch_id, linked
      """;

  private static final String DELETE_COMPLETED_MANY =
      """
      DELETE FROM pgbus.job j
       USING unnest(?::bigint[], ?::int[]) AS held(id, attempt)
       WHERE j.id = held.id AND j.attempt = held.attempt AND j.state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING j.id, j.batch_id, j.linked
      """;

  private static final String EXTEND_LEASES =
      """
      UPDATE pgbus.job j
         SET lease_expires_at = now() + ?::float8 * interval '1 millisecond'
        FROM unnest(?::bigint[], ?::int[]) AS held(id, attempt)
       WHERE j.id = held.id AND j.attempt = held.attempt AND j.state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      """;

  // The one definition of how an attempt's error is recorded (a failure, a cancel from the handler,
  // a rescue): the newest error goes first and the list is cut to the newest errorsKept (its last
  // index is bound to the jsonpath variable $last), so a job that fails forever stays small. The
  // statement supplies the error text as e.error: a bound one-row FROM, or per row in RESCUE.
  // pgbus.claim (SQL) records an oversized payload the same way; ErrorsKeptTest holds its bound.
  private static final String ERRORS_PREPENDED =
      """
             errors = pg_catalog.jsonb_path_query_array(
                        pg_catalog.jsonb_build_array(pg_catalog.jsonb_build_object(
                          'attempt', attempt, 'at', now(), 'error', e.error))
                          || errors,
                        '$[0 to $last]', pg_catalog.jsonb_build_object('last', ?::int))
      """;

  // A progress report (V11), fenced like COMPLETE: a report that races the job's end, or comes
  // from a worker whose lease was rescued, changes nothing. Written outside the handler's
  // transaction, so operators see it while the job runs; the CHECK job_progress_shape bounds it.
  private static final String PROGRESS =
      """
      UPDATE pgbus.job
         SET progress = pg_catalog.jsonb_build_object(
               'percent', ?::int, 'message', ?::text, 'at', ?::timestamptz, 'attempt', ?::int)
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      """;

  // A failed attempt: retryable with backoff, or dead once the attempts are spent.
  // The backoff is clamped to run_at's bound (V5): 36,500 days = 3,153,600,000,000 ms.
  // A job that goes back to wait for a later run_at (a retry, a snooze) announces that time to
  // every
  // engine that reads its queue, as the enqueue of a delayed job does (pgbus.notify: the due time
  // as
  // the payload, delivered at this transaction's commit, none for a paused queue). Before, only the
  // capsule that ran it set its alarm: another engine, or this one's other capsules, learnt of the
  // job only at their next poll, up to pgbus.poll-ceiling late while that capsule was busy (issue
  // #29, item 6). It costs the failing transaction the NOTIFY lock at its commit (issue #26), which
  // a
  // failure pays where an enqueue should not.
  private static final String FAIL =
      """
      WITH failed AS (
      UPDATE pgbus.job
         SET state = CASE WHEN attempt >= max_attempts::integer THEN 'dead' ELSE 'retryable' END::pgbus.job_state,
             run_at = CASE WHEN attempt >= max_attempts::integer THEN run_at
                           ELSE now() + LEAST(?::float8, 3153600000000) * interval '1 millisecond' END,
             finalized_at = CASE WHEN attempt >= max_attempts::integer THEN now() END,
             lease_expires_at = NULL,
      """
          + ERRORS_PREPENDED
          + """
        FROM (SELECT ?::text AS error) e
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING state, run_at, linked, queue)
      SELECT f.state::pg_catalog.text, f.run_at, f.linked,
             CASE WHEN f.state::pg_catalog.text OPERATOR(pg_catalog.=) 'retryable'
                  THEN pgbus.notify(f.queue, f.run_at) END IS NULL
        FROM failed f
      """;

  // FAIL for a failure no retry mends (RunAsUnavailableException): dead whatever attempts are
  // left. The same statement with the attempts test made true, so both keep one shape.
  private static final String FAIL_LAST = lastAttempt(FAIL);

  private static String lastAttempt(String fail) {
    String test = "attempt >= max_attempts::integer";
    if (!fail.contains(test)) {
      throw new IllegalStateException("no attempts test in " + fail);
    }
    return fail.replace(test, "true");
  }

  // A snooze gives the attempt back: the claim counted it, the snooze uncounts it.
  // Its wake as a retry's (FAIL).
  private static final String SNOOZE =
      """
      WITH snoozed AS (
      UPDATE pgbus.job
         SET state = 'scheduled',
             run_at = now() + LEAST(?::float8, 3153600000000) * interval '1 millisecond',
             attempt = attempt - 1, lease_expires_at = NULL
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING run_at, queue)
      SELECT s.run_at, pgbus.notify(s.queue, s.run_at) IS NULL FROM snoozed s
      """;

  private static final String CANCEL_RUNNING =
      """
      UPDATE pgbus.job
         SET state = 'cancelled', finalized_at = now(), lease_expires_at = NULL,
      """
          + ERRORS_PREPENDED
          + """
        FROM (SELECT ?::text AS error) e
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING linked
      """;

  // Hands back a claimed job that never started (for example, the executor refused it).
  private static final String RELEASE =
      """
      UPDATE pgbus.job
         SET state = 'available', attempt = attempt - 1, lease_expires_at = NULL,
             attempted_at = NULL, attempted_by = NULL
       WHERE id = ? AND attempt = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      RETURNING queue
      """;

  // A stop whose drain ran out hands the jobs it still holds back: available at once, and the
  // attempt the claim counted is given back as budget (max_attempts + 1) rather than by lowering
  // attempt, which is the fence: a handler of the stopping JVM that still runs must never match the
  // job once another worker claims it (attempt + 1 there). One wake per queue for the other JVMs.
  private static final String RELEASE_DRAINED =
      """
      WITH released AS (
        UPDATE pgbus.job j
           SET state = 'available', run_at = now(), max_attempts = j.max_attempts::integer + 1,
               lease_expires_at = NULL
          FROM unnest(?::bigint[], ?::int[]) AS held(id, attempt)
         WHERE j.id = held.id AND j.attempt = held.attempt AND j.state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
        RETURNING j.id, j.queue)
      SELECT queue::text, pg_catalog.array_agg(id ORDER BY id), pgbus.notify(queue, now())
        FROM released GROUP BY queue
      """;

  // The last step of a stop: whatever the stopping worker still has running after its drain and
  // hand-back (an attempt whose failure the container would not let it record: WildFly refuses the
  // job's EJB calls while it shuts down) goes back as RELEASE_DRAINED does: available, the attempt
  // given back as budget, the fence kept. job_lease_idx covers running jobs only.
  private static final String RELEASE_WORKER =
      """
      WITH released AS (
        UPDATE pgbus.job j
           SET state = 'available', run_at = pg_catalog.now(), max_attempts = j.max_attempts::integer + 1,
               lease_expires_at = NULL
         WHERE j.state OPERATOR(pg_catalog.=) 'running'
           AND j.attempted_by OPERATOR(pg_catalog.=) ?::text
        RETURNING j.id, j.queue)
      SELECT queue::text, pg_catalog.array_agg(id ORDER BY id), pgbus.notify(queue, pg_catalog.now())
        FROM released GROUP BY queue
      """;

  // A waiting job is cancelled at once. A running one is only asked to stop: cancel_attempt (V8)
  // records which attempt, and NOTIFY Channels.CANCEL '<id>:<attempt>' reaches the JVM that runs it
  // at commit; that JVM reads cancel_attempt back (CANCELS_REQUESTED) before it interrupts the
  // handler, and settles the job as cancelled itself, fenced on (id, attempt, running). The channel
  // cannot be a queue's: queue names have no '-'. Both updates carry their whole predicate on the
  // target row, so a job that finishes while this waits for its row lock is left alone (the
  // recheck sees it finished) and nothing is audited or sent.
  // The state of a schedule's previous run (ScheduleEnqueuer's overlap policy): the live table
  // only.
  // A job in pgbus.job_history, or pruned, has ended; so has a dead one, which stays here.
  private static final String WAITING_OR_RUNNING =
      """
      SELECT state::pg_catalog.text FROM pgbus.job
       WHERE id OPERATOR(pg_catalog.=) ?::pg_catalog.int8
         AND state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}')
      """;

  private static final String CANCEL =
      """
      WITH waiting AS (
        UPDATE pgbus.job
           SET state = 'cancelled', finalized_at = now()
         WHERE id = ? AND state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,retryable}')
        RETURNING id, queue, linked),
      running AS (
        UPDATE pgbus.job
           SET cancel_attempt = attempt
         WHERE id = ? AND state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
        RETURNING id, queue, attempt),
      acted AS (
        SELECT id, queue, NULL::jsonb AS detail FROM waiting
        UNION ALL
        SELECT id, queue, pg_catalog.jsonb_build_object('running', true, 'attempt', attempt)
          FROM running),
      audited AS (
        INSERT INTO pgbus.audit (actor, action, queue, job_id, detail)
        SELECT coalesce(nullif(?::text, ''), session_user::text), 'cancel', queue::text, id, detail
          FROM acted),
      sent AS (
        SELECT pg_catalog.pg_notify('%s', id::text || ':' || attempt::text) FROM running)
      SELECT (SELECT count(*) FROM acted), (SELECT count(*) FROM sent),
             (SELECT count(*) FROM waiting WHERE linked)
      """
          .formatted(Channels.CANCEL);

  // Which of these jobs had a cancel of their running attempt requested: what a JVM checks before
  // it believes "pgbus-cancel" notifications, whose payloads anyone may forge. One statement for
  // all the requests heard since the last check (a primary-key probe each), so a flood of forged
  // ones costs the database a statement per check interval, not one per NOTIFY. The caller
  // matches the attempts.
  private static final String CANCELS_REQUESTED =
      """
      SELECT j.id, j.attempt FROM pgbus.job j
       WHERE j.id OPERATOR(pg_catalog.=) ANY (?::pg_catalog.int8[])
         AND j.cancel_attempt OPERATOR(pg_catalog.=) j.attempt
         AND j.state::pg_catalog.text OPERATOR(pg_catalog.=) 'running'
      """;

  // A dead job with a unique key stays dead while another job with its key waits or runs: the
  // NOT EXISTS makes that a plain "not replayed" instead of a unique violation, which would abort
  // the caller's transaction. (Two replays racing for one key still meet the index.)
  private static final String REPLAY_DEAD =
      """
      WITH acted AS (
        UPDATE pgbus.job d
           SET state = 'available', run_at = now(), finalized_at = NULL, batch_id = NULL,
               max_attempts = d.attempt + (d.max_attempts::integer - d.attempt_base),
               attempt_base = d.attempt
         WHERE d.id = ? AND d.state OPERATOR(pg_catalog.=) 'dead'
           AND (d.unique_key IS NULL OR NOT EXISTS (
                 SELECT 1 FROM pgbus.job o
                  WHERE o.queue::text = d.queue::text AND o.unique_key::text = d.unique_key::text
                    AND o.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}')))
        RETURNING d.id, d.queue)
      """
          + AUDIT_JOB
          + """
      SELECT pgbus.notify(queue, now()) FROM acted
      """;

  // Expired leases go back to retryable, or to dead when the attempt that crashed was the last:
  // the claim already counted it, so a job that kills its JVM every time cannot loop forever.
  // So do the running jobs of a node that stopped heartbeating (V13): its row older than two
  // thirds of its own TTL (it renews every third, so one beat may be late), and the job claimed
  // longer ago than that, so a job just claimed by a JVM idle for a while (its row renewed only at
  // its slow poll) waits for the beat its start brings. A worker without a row, or with a row
  // without a TTL (the test kit's runners, an engine from before V13), keeps the lease alone. The
  // running set is small (bounded by the fleet's slots) and job_lease_idx covers exactly it.
  // SKIP LOCKED lets two rescuers run at once without waiting on each other. One notification per
  // queue wakes the capsules that read it.
  private static final String RESCUE =
      """
      WITH expired AS (
        SELECT j.id,
               CASE WHEN j.lease_expires_at < now()
                    THEN 'lease expired: worker ' || coalesce(j.attempted_by, '?')
                         || ' did not finish the job in time'
                    ELSE 'heartbeat lost: worker ' || j.attempted_by
                         || ' stopped renewing its node row (last seen '
                         || pg_catalog.to_char(n.seen_at, 'YYYY-MM-DD HH24:MI:SS.MS TZ')
                         || '); its job was rescued without waiting for its lease'
               END AS error
          FROM pgbus.job j
          LEFT JOIN pgbus.node n
            ON n.worker_id OPERATOR(pg_catalog.=) j.attempted_by
           AND n.heartbeat_ttl_ms IS NOT NULL
         WHERE j.state OPERATOR(pg_catalog.=) 'running'
           AND (j.lease_expires_at < now()
                OR (n.seen_at < now() - n.heartbeat_ttl_ms::float8 * 2::float8 / 3::float8 * interval '1 millisecond'
                    AND j.attempted_at < now() - n.heartbeat_ttl_ms::float8 * 2::float8 / 3::float8 * interval '1 millisecond'))
         ORDER BY j.lease_expires_at
         LIMIT ?
         FOR UPDATE OF j SKIP LOCKED
      ), rescued AS (
        UPDATE pgbus.job j
           SET state = CASE WHEN j.attempt >= j.max_attempts::integer THEN 'dead' ELSE 'retryable' END::pgbus.job_state,
               run_at = now(),
               finalized_at = CASE WHEN j.attempt >= j.max_attempts::integer THEN now() END,
               lease_expires_at = NULL,
      """
          + ERRORS_PREPENDED
          + """
          FROM expired e
         WHERE j.id = e.id
        RETURNING j.queue, j.id, j.linked AND j.state OPERATOR(pg_catalog.=) 'dead' AS ended)
      SELECT queue, count(*), pgbus.notify(queue, now()),
             pg_catalog.array_agg(id) FILTER (WHERE ended)
        FROM rescued GROUP BY queue
      """;

  // The head of each queue: its earliest waiting job, and whether that one is due by the
  // database's clock (pgbus.queue_head: job_claim_idx, one probe per priority level; V40).
  // A paused queue has no head: the ticker must not wake a capsule for jobs that no claim may
  // take, or every tick would end in an empty claim (and an alarm in the past, in a busy loop).
  private static final String QUEUE_HEADS =
      """
      SELECT q.queue, h.run_at, h.run_at <= now()
        FROM pg_catalog.unnest(?::text[]) AS q(queue)
        CROSS JOIN LATERAL (SELECT pgbus.queue_head(q.queue) AS run_at) h
       WHERE h.run_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = q.queue)
      """;

  // Paused queues are left out for the same reason as in QUEUE_HEADS: a capsule would set an
  // alarm for a due job it may not claim, ring, claim nothing, and set it again. The earliest
  // scheduled or retryable job of each queue (pgbus.queue_head, delayed_only; a job past its
  // start-by deadline, V43, is due no more), then the earliest of those.
  private static final String NEXT_DUE =
      """
      SELECT min(pgbus.queue_head(q.queue, true))
        FROM pg_catalog.unnest(?::text[]) AS q(queue)
       WHERE NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = q.queue)
      """;

  // The predicate is on the deleted row itself, and the CTE locks what it picks, skipping
  // rows another transaction holds. Without both, a prune that picked a dead job while a replay was
  // reviving it waited for the replay's commit, and then deleted the job: after a concurrent
  // update, PostgreSQL rechecks only the target's own quals (EvalPlanQual), and `id IN (...)` was
  // all the target had. With SKIP LOCKED the prune passes a row being changed (the next round
  // takes it if it is still prunable); the outer predicate is the recheck on the row it deletes.
  // The other writes that pick rows in a sub-select or CTE (pgbus.claim, RESCUE) lock them there
  // FOR UPDATE SKIP LOCKED, so no one can change them before the write; the rest put their
  // whole predicate on the target row. MATERIALIZED: the pick runs once, so LIMIT bounds the batch
  // (as `id IN (sub-select)` the planner may scan the sub-select again per outer row).
  private static final String PRUNE =
      """
      WITH picked AS MATERIALIZED (
             SELECT f.id FROM pgbus.job f
              WHERE f.state OPERATOR(pg_catalog.=) ?::pgbus.job_state
                AND f.finalized_at < now() - ?::float8 * interval '1 millisecond'
              LIMIT ?
              FOR UPDATE SKIP LOCKED)
      DELETE FROM pgbus.job j
       WHERE j.id IN (SELECT p.id FROM picked p)
         AND j.state OPERATOR(pg_catalog.=) ?::pgbus.job_state
         AND j.finalized_at < now() - ?::float8 * interval '1 millisecond'
      """;

  // Reports linked jobs that reached a final state to their batches and dependents (R__links.sql),
  // in the transaction that finished them. FINISHED reads the rows; FINISHED_DELETED is for jobs
  // deleted on completion, whose batch the DELETE returned.
  private static final String FINISHED = "SELECT pgbus.job_finished(?::bigint[])";

  // The leader's expiry of start-by deadlines (V43): waiting jobs whose deadline passed end
  // cancelled, never run (the claim refuses them from the deadline on; this makes it final). Picked
  // on job_start_by_idx and locked SKIP LOCKED, as the rescue; the outer predicate is the recheck.
  // cancelled, not a new state: every release reads it. Audited as a cancel by 'pgbus' with
  // {"expired": true, "start_by": ...}, and the error says when, so explain and the console show
  // it.
  private static final String EXPIRE =
      """
      WITH picked AS MATERIALIZED (
        SELECT f.id, 'expired: not started by '
                     || pg_catalog.to_char(f.start_by AT TIME ZONE 'UTC',
                                           'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS error
          FROM pgbus.job f
         WHERE f.start_by <= now()
           AND f.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,retryable}')
         ORDER BY f.start_by
         LIMIT ?
         FOR UPDATE SKIP LOCKED),
      expired AS (
        UPDATE pgbus.job j
           SET state = 'cancelled', finalized_at = now(), lease_expires_at = NULL,
      """
          + ERRORS_PREPENDED.replace("e.error", "p.error")
          + """
          FROM picked p
         WHERE j.id OPERATOR(pg_catalog.=) p.id AND j.start_by <= now()
           AND j.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,retryable}')
        RETURNING j.id, j.queue, j.linked, j.start_by),
      audited AS (
        INSERT INTO pgbus.audit (actor, action, queue, job_id, detail)
        SELECT 'pgbus', 'cancel', x.queue::text, x.id,
               pg_catalog.jsonb_build_object('expired', true, 'start_by', x.start_by)
          FROM expired x)
      SELECT x.queue::text, x.id, x.linked FROM expired x
      """;

  private static final String SET_START_BY = "SELECT pgbus.set_start_by(?::bigint, ?)";

  // A bulk enqueue's deadlines, checked in Java (StartBy.check), in one set-based statement: a
  // call of pgbus.set_start_by per job cost 10,000 PL/pgSQL calls for a full enqueueAll. Only jobs
  // that have not started yet, as set_start_by.
  private static final String SET_START_BY_MANY =
      """
      UPDATE pgbus.job j SET start_by = t.s
        FROM unnest(?::bigint[], ?::timestamptz[]) AS t(i, s)
       WHERE j.id OPERATOR(pg_catalog.=) t.i
         AND j.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available}') AND j.attempt = 0
      """;

  private static final String FINISHED_DELETED =
      """
      SELECT pgbus.job_finished_as(?::bigint[], ?::bigint[],
                                pg_catalog.array_fill('completed'::text, ARRAY[?::int]),
                                pg_catalog.array_fill(NULL::jsonb, ARRAY[?::int]))
      """;

  /** Inserts one job and its wake-up notification in the connection's transaction; its id. */
  public long jobInsert(Connection c, NewJob job) throws SQLException {
    return jobInsertIfAbsent(c, job).id();
  }

  /**
   * Inserts one job and its wake-up in the connection's transaction, unless its unique key is taken
   * by a waiting or running job of the queue: then nothing is written and that job's id comes back
   * as a duplicate.
   */
  public Enqueued jobInsertIfAbsent(Connection c, NewJob job) throws SQLException {
    return jobInsertIfAbsent(c, job, null);
  }

  /** {@link #jobInsertIfAbsent(Connection, NewJob)}, in the trace {@code trace} (may be null). */
  public Enqueued jobInsertIfAbsent(Connection c, NewJob job, TraceContext trace)
      throws SQLException {
    return jobInsertIfAbsent(c, job, trace, false);
  }

  /**
   * {@link #jobInsertIfAbsent(Connection, NewJob, TraceContext)}; with {@code clientWake} the
   * caller wakes the workers after the commit and the database sends no wake for it.
   */
  Enqueued jobInsertIfAbsent(Connection c, NewJob job, TraceContext trace, boolean clientWake)
      throws SQLException {
    EnqueueOptions o = job.options();
    String sql =
        clientWake
            ? forCaller(job, ENQUEUE_CLIENT_WAKE, ENQUEUE_IN_HANDLER_CLIENT_WAKE)
            : forCaller(job, ENQUEUE, ENQUEUE_IN_HANDLER);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, job.queue());
      ps.setString(2, job.enqueuedBy());
      ps.setString(3, job.runAs());
      ps.setString(4, o.correlationId());
      ps.setObject(5, job.parentJobId(), Types.BIGINT);
      ps.setString(6, job.payloadJson());
      ps.setTimestamp(7, o.runAt() == null ? null : Timestamp.from(o.runAt()));
      ps.setLong(8, o.delay() == null ? 0 : o.delay().toMillis());
      ps.setInt(9, o.priority());
      ps.setInt(10, o.maxAttempts());
      ps.setString(11, o.uniqueKey());
      ps.setString(12, trace == null ? null : trace.traceParent());
      ps.setString(13, trace == null ? null : trace.traceState());
      ps.setString(14, o.concurrencyKey());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Enqueued(rs.getLong(1), rs.getBoolean(2));
      }
    }
  }

  /**
   * Inserts many jobs in one statement with one notification per queue; ids in input order. Jobs
   * with a unique key that is taken (by a waiting job, or earlier in the batch) get the existing id
   * instead.
   */
  public List<Long> jobInsertMany(Connection c, List<NewJob> jobs) throws SQLException {
    return jobInsertMany(c, jobs, null);
  }

  /** {@link #jobInsertMany(Connection, List)}, all in the trace {@code trace} (may be null). */
  public List<Long> jobInsertMany(Connection c, List<NewJob> jobs, TraceContext trace)
      throws SQLException {
    return jobInsertMany(c, jobs, trace, false);
  }

  /** {@link #jobInsertMany(Connection, List, TraceContext)}; {@code clientWake} as for one. */
  List<Long> jobInsertMany(Connection c, List<NewJob> jobs, TraceContext trace, boolean clientWake)
      throws SQLException {
    int n = jobs.size();
    String[] queues = new String[n];
    String[] payloads = new String[n];
    // ISO-8601 instants ("...Z"), not Timestamps: pgjdbc writes array elements of Timestamp as
    // local time without an offset, which the server then reads in the session's time zone.
    String[] runAts = new String[n];
    Long[] delays = new Long[n];
    Integer[] priorities = new Integer[n];
    Integer[] maxAttempts = new Integer[n];
    String[] uniqueKeys = new String[n];
    String[] concurrencyKeys = new String[n];
    boolean anyConcurrencyKey = false;
    for (int i = 0; i < n; i++) {
      NewJob j = jobs.get(i);
      EnqueueOptions o = j.options();
      queues[i] = j.queue();
      payloads[i] = j.payloadJson();
      runAts[i] = o.runAt() == null ? null : o.runAt().toString();
      delays[i] = o.delay() == null ? 0L : o.delay().toMillis();
      priorities[i] = o.priority();
      maxAttempts[i] = o.maxAttempts();
      uniqueKeys[i] = o.uniqueKey();
      concurrencyKeys[i] = o.concurrencyKey();
      anyConcurrencyKey |= o.concurrencyKey() != null;
    }
    NewJob first = jobs.get(0);
    for (NewJob j : jobs) {
      if (!Objects.equals(j.enqueuedBy(), first.enqueuedBy())
          || !Objects.equals(j.runAs(), first.runAs())
          || !Objects.equals(j.options().correlationId(), first.options().correlationId())
          || !Objects.equals(j.parentJobId(), first.parentJobId())) {
        throw new IllegalArgumentException(
            "a batch enqueue records one principal, one run-as user, one correlation id and one"
                + " parent job for all"
                + " its jobs, but"
                + " job "
                + jobs.indexOf(j)
                + " differs from the first: enqueue it separately");
      }
    }
    String sql =
        clientWake
            ? forCaller(first, ENQUEUE_MANY_CLIENT_WAKE, ENQUEUE_MANY_IN_HANDLER_CLIENT_WAKE)
            : forCaller(first, ENQUEUE_MANY, ENQUEUE_MANY_IN_HANDLER);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("text", queues));
      ps.setString(2, first.enqueuedBy());
      ps.setString(3, first.runAs());
      ps.setString(4, first.options().correlationId());
      ps.setObject(5, first.parentJobId(), Types.BIGINT);
      ps.setArray(6, c.createArrayOf("text", payloads));
      ps.setArray(7, c.createArrayOf("text", runAts));
      ps.setArray(8, c.createArrayOf("int8", delays));
      ps.setArray(9, c.createArrayOf("int4", priorities));
      ps.setArray(10, c.createArrayOf("int4", maxAttempts));
      ps.setArray(11, c.createArrayOf("text", uniqueKeys));
      if (trace == null) {
        ps.setNull(12, Types.ARRAY);
        ps.setNull(13, Types.ARRAY);
      } else {
        String[] parents = new String[n];
        String[] states = new String[n];
        Arrays.fill(parents, trace.traceParent());
        Arrays.fill(states, trace.traceState());
        ps.setArray(12, c.createArrayOf("text", parents));
        ps.setArray(13, c.createArrayOf("text", states));
      }
      if (anyConcurrencyKey) {
        ps.setArray(14, c.createArrayOf("text", concurrencyKeys));
      } else {
        ps.setNull(14, Types.ARRAY);
      }
      var ids = new ArrayList<Long>(n);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
        }
      }
      return ids;
    }
  }

  /** Claims up to {@code max} jobs from {@code queues} in strict queue order. */
  public List<ClaimedJob> jobClaim(
      Connection c, List<String> queues, int max, String worker, Duration lease)
      throws SQLException {
    List<ClaimedJob> jobs = new ArrayList<>(max);
    claim(c, queues, max, null, worker, lease, null).forEach(jobs::addAll);
    return jobs;
  }

  /**
   * Claims up to {@code max} jobs from {@code queues} in strict queue order, dealt over at most
   * {@code lanes} lanes: the lists returned, each in claim order. The caller runs the jobs of one
   * lane one after another, never two at once; a queue's global limit counts its lanes (V19).
   */
  public List<List<ClaimedJob>> jobClaimInLanes(
      Connection c, List<String> queues, int max, int lanes, String worker, Duration lease)
      throws SQLException {
    return claim(c, queues, max, lanes, worker, lease, null);
  }

  /**
   * As {@link #jobClaimInLanes(Connection, List, int, int, String, Duration)}, each (queue, level)
   * of {@code floors} claimed from its floor on (docs/schema.md, "Claim floors"); null: none.
   */
  List<List<ClaimedJob>> jobClaimInLanes(
      Connection c,
      List<String> queues,
      int max,
      int lanes,
      String worker,
      Duration lease,
      ClaimFloors.Floors floors)
      throws SQLException {
    return claim(c, queues, max, lanes, worker, lease, floors);
  }

  private List<List<ClaimedJob>> claim(
      Connection c,
      List<String> queues,
      int max,
      Integer lanes,
      String worker,
      Duration lease,
      ClaimFloors.Floors floors)
      throws SQLException {
    // pgbus.claim refuses a longer list too (R__claim.sql); a capsule never has one
    // (CapsuleConfig).
    if (queues.size() > CapsuleConfig.MAX_QUEUES) {
      throw new IllegalArgumentException(
          "a claim of "
              + queues.size()
              + " queues is over the limit of "
              + CapsuleConfig.MAX_QUEUES
              + " queues per claim: split them over several capsules");
    }
    try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
      ps.setArray(1, textArray(c, queues));
      ps.setInt(2, max);
      ps.setString(3, worker);
      ps.setLong(4, lease.toMillis());
      if (lanes == null) {
        ps.setNull(5, Types.INTEGER);
      } else {
        ps.setInt(5, lanes);
      }
      if (floors == null) {
        ps.setNull(6, Types.VARCHAR);
        ps.setNull(7, Types.VARCHAR);
        ps.setNull(8, Types.VARCHAR);
      } else {
        ps.setArray(6, textArray(c, floors.queues()));
        ps.setArray(7, c.createArrayOf("int4", floors.priorities().toArray()));
        ps.setArray(8, textArray(c, floors.runAts().stream().map(Instant::toString).toList()));
      }
      // Lane -> its jobs, in the order the lanes first appear; a job without a lane is its own.
      var byLane = new LinkedHashMap<Object, List<ClaimedJob>>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ClaimedJob job =
              new ClaimedJob(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getInt(3),
                  rs.getString(4),
                  rs.getInt(5),
                  rs.getInt(6),
                  rs.getTimestamp(7).toInstant(),
                  rs.getTimestamp(8).toInstant(),
                  rs.getString(9) == null
                      ? null
                      : TraceContext.of(rs.getString(9), rs.getString(10)),
                  rs.getInt(12),
                  rs.getString(13),
                  rs.getObject(14, Long.class));
          long lane = rs.getLong(11);
          Object key = rs.wasNull() ? new Object() : lane;
          byLane.computeIfAbsent(key, k -> new ArrayList<>()).add(job);
        }
      }
      return new ArrayList<>(byLane.values());
    }
  }

  /** Stores a held job's latest progress report; false when the job no longer runs here. */
  public boolean jobProgress(Connection c, ClaimedJob job, JobProgress.Report report)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PROGRESS)) {
      ps.setInt(1, report.percent());
      ps.setString(2, report.message());
      ps.setTimestamp(3, Timestamp.from(report.at()));
      ps.setInt(4, job.attempt());
      ps.setLong(5, job.id());
      ps.setInt(6, job.attempt());
      return ps.executeUpdate() == 1;
    }
  }

  /** Marks a held job completed; false when the lease was lost. */
  public boolean jobComplete(Connection c, ClaimedJob job) throws SQLException {
    return jobComplete(c, job, false);
  }

  /**
   * Marks a held job completed, or deletes it when {@code delete}; false when the lease was lost.
   */
  public boolean jobComplete(Connection c, ClaimedJob job, boolean delete) throws SQLException {
    if (delete) {
      try (PreparedStatement ps = c.prepareStatement(DELETE_COMPLETED)) {
        ps.setLong(1, job.id());
        ps.setInt(2, job.attempt());
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return false;
          }
          if (rs.getBoolean(3)) {
            jobFinishedDeleted(c, List.of(job.id()), List.of(rs.getObject(2, Long.class)));
          }
          return true;
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      return finishedIfLinked(c, job.id(), ps);
    }
  }

  /**
   * Runs a single-job finishing statement that returns {@code linked}; when the job is linked,
   * reports its end (FINISHED) in the same transaction. False when no row matched.
   */
  private static boolean finishedIfLinked(Connection c, long id, PreparedStatement ps)
      throws SQLException {
    boolean linked;
    try (ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        return false;
      }
      linked = rs.getBoolean("linked");
    }
    if (linked) {
      jobFinished(c, List.of(id));
    }
    return true;
  }

  /**
   * Reports jobs that reached a final state (their rows exist) to their batches and dependents: see
   * pgbus.job_finished in R__links.sql. Only for linked jobs; the caller's transaction.
   */
  // The earliest deadline of a waiting job: job_start_by_idx holds only jobs that have one, so an
  // idle deployment's probe reads an empty index. Autocommit, no lock: the expiry's transaction
  // opens only once a deadline has passed.
  private static final String NEXT_START_BY =
      """
      SELECT min(j.start_by) FROM pgbus.job j
       WHERE j.start_by IS NOT NULL
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
      """;

  /** The earliest start-by deadline of a waiting job, or null when none has one. */
  Instant jobNextStartBy(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(NEXT_START_BY);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      OffsetDateTime t = rs.getObject(1, OffsetDateTime.class);
      return t == null ? null : t.toInstant();
    }
  }

  /**
   * Cancels up to {@code limit} waiting jobs whose start-by deadline passed, and reports those that
   * are linked to their batches and dependents; how many per queue.
   */
  Map<String, Long> jobExpire(Connection c, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EXPIRE)) {
      ps.setInt(1, limit);
      ps.setInt(2, errorsKept - 1);
      var perQueue = new LinkedHashMap<String, Long>();
      var linked = new ArrayList<Long>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          perQueue.merge(rs.getString(1), 1L, Long::sum);
          if (rs.getBoolean(3)) {
            linked.add(rs.getLong(2));
          }
        }
      }
      jobFinished(c, linked);
      return perQueue;
    }
  }

  /**
   * Gives the jobs of a bulk enqueue their deadlines, checked by the caller, in one statement; how
   * many it wrote.
   */
  int jobSetStartByMany(Connection c, java.util.Map<Long, Instant> startBys) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_START_BY_MANY)) {
      ps.setArray(1, c.createArrayOf("int8", startBys.keySet().toArray()));
      // ISO-8601 instants, as jobInsertMany's run_ats: Timestamps in arrays lose their offset.
      ps.setArray(
          2, c.createArrayOf("text", startBys.values().stream().map(Instant::toString).toArray()));
      return ps.executeUpdate();
    }
  }

  /**
   * Gives a job just enqueued its start-by deadline ({@code pgbus.set_start_by}, which checks it as
   * {@link Jobs} does); false when the job is no longer waiting to start.
   */
  boolean jobSetStartBy(Connection c, long id, Instant startBy) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SET_START_BY)) {
      ps.setLong(1, id);
      ps.setObject(
          2, OffsetDateTime.ofInstant(startBy, ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  static void jobFinished(Connection c, List<Long> ids) throws SQLException {
    if (ids.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(FINISHED)) {
      ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
      ps.execute();
    }
  }

  /** {@link #jobFinished} for completed jobs already deleted; {@code batches} may hold nulls. */
  private static void jobFinishedDeleted(Connection c, List<Long> ids, List<Long> batches)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(FINISHED_DELETED)) {
      ps.setArray(1, c.createArrayOf("bigint", ids.toArray()));
      ps.setArray(2, c.createArrayOf("bigint", batches.toArray()));
      ps.setInt(3, ids.size());
      ps.setInt(4, ids.size());
      ps.execute();
    }
  }

  /**
   * Marks a held job completed with its result (JSON text, already checked against {@link
   * io.pgbus.Outcome#MAX_RESULT_BYTES}); false when the lease was lost.
   */
  public boolean jobCompleteWithResult(Connection c, ClaimedJob job, String resultJson)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(COMPLETE_WITH_RESULT)) {
      ps.setString(1, resultJson);
      ps.setLong(2, job.id());
      ps.setInt(3, job.attempt());
      return finishedIfLinked(c, job.id(), ps);
    }
  }

  /** Marks held jobs completed in one statement; returns how many still held their lease. */
  public int jobCompleteMany(Connection c, List<ClaimedJob> jobs) throws SQLException {
    return jobCompleteMany(c, jobs, false);
  }

  /**
   * Marks held jobs completed (or deletes them when {@code delete}) in one statement; returns how
   * many still held their lease.
   */
  public int jobCompleteMany(Connection c, List<ClaimedJob> jobs, boolean delete)
      throws SQLException {
    int done = 0;
    var linked = new ArrayList<Long>();
    var batches = new ArrayList<Long>();
    try (PreparedStatement ps =
        c.prepareStatement(delete ? DELETE_COMPLETED_MANY : COMPLETE_MANY)) {
      bindHeld(c, ps, 1, jobs);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          done++;
          if (rs.getBoolean(3)) {
            linked.add(rs.getLong(1));
            batches.add(rs.getObject(2, Long.class));
          }
        }
      }
    }
    if (!linked.isEmpty()) {
      if (delete) {
        jobFinishedDeleted(c, linked, batches);
      } else {
        jobFinished(c, linked);
      }
    }
    return done;
  }

  /** Renews the leases of held jobs to {@code lease} from now; returns how many were held. */
  public int jobExtendLeases(Connection c, List<ClaimedJob> jobs, Duration lease)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EXTEND_LEASES)) {
      ps.setLong(1, lease.toMillis());
      bindHeld(c, ps, 2, jobs);
      return ps.executeUpdate();
    }
  }

  /** Binds the (id, attempt) fence of {@code jobs} as two arrays from {@code index} on. */
  private static void bindHeld(Connection c, PreparedStatement ps, int index, List<ClaimedJob> jobs)
      throws SQLException {
    Long[] ids = new Long[jobs.size()];
    Integer[] attempts = new Integer[jobs.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = jobs.get(i).id();
      attempts[i] = jobs.get(i).attempt();
    }
    ps.setArray(index, c.createArrayOf("bigint", ids));
    ps.setArray(index + 1, c.createArrayOf("integer", attempts));
  }

  /** What a failed attempt led to. */
  public record FailResult(boolean dead, Instant retryAt) {}

  /**
   * Records a failed attempt: retryable after {@code backoff}, or dead when it was the last.
   * Returns {@code null} when the lease was lost.
   */
  public FailResult jobFail(Connection c, ClaimedJob job, String error, Duration backoff)
      throws SQLException {
    return jobFail(c, job, error, backoff, false);
  }

  /**
   * {@link #jobFail(Connection, ClaimedJob, String, Duration)}; with {@code last} the job is dead
   * whatever attempts it has left.
   */
  public FailResult jobFail(
      Connection c, ClaimedJob job, String error, Duration backoff, boolean last)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(last ? FAIL_LAST : FAIL)) {
      ps.setLong(1, backoff.toMillis());
      ps.setInt(2, errorsKept - 1);
      ps.setString(3, truncate(error));
      ps.setLong(4, job.id());
      ps.setInt(5, job.attempt());
      FailResult result;
      boolean linked;
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        boolean dead = "dead".equals(rs.getString(1));
        result = new FailResult(dead, dead ? null : rs.getTimestamp(2).toInstant());
        linked = rs.getBoolean(3);
      }
      if (result.dead() && linked) {
        jobFinished(c, List.of(job.id()));
      }
      return result;
    }
  }

  /** Puts a held job back to sleep without spending its attempt; null when the lease was lost. */
  public Instant jobSnooze(Connection c, ClaimedJob job, Duration delay) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(SNOOZE)) {
      ps.setLong(1, delay.toMillis());
      ps.setLong(2, job.id());
      ps.setInt(3, job.attempt());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getTimestamp(1).toInstant() : null;
      }
    }
  }

  /** Cancels a held job for good; false when the lease was lost. */
  public boolean jobCancelRunning(Connection c, ClaimedJob job, String reason) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CANCEL_RUNNING)) {
      ps.setInt(1, errorsKept - 1);
      ps.setString(2, "cancelled: " + truncate(reason));
      ps.setLong(3, job.id());
      ps.setInt(4, job.attempt());
      return finishedIfLinked(c, job.id(), ps);
    }
  }

  /**
   * Hands back the jobs a stopping engine still holds (see RELEASE_DRAINED): the ids released, by
   * queue. A job that finished or was rescued meanwhile is left alone.
   */
  public Map<String, List<Long>> jobReleaseDrained(Connection c, List<ClaimedJob> jobs)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RELEASE_DRAINED)) {
      bindHeld(c, ps, 1, jobs);
      var released = new LinkedHashMap<String, List<Long>>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          released.put(rs.getString(1), List.of((Long[]) rs.getArray(2).getArray()));
        }
      }
      return released;
    }
  }

  /**
   * Releases every job {@code workerId} still has running ({@link #RELEASE_WORKER}), by queue; for
   * the end of that worker's stop.
   */
  public Map<String, List<Long>> jobReleaseWorker(Connection c, String workerId)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RELEASE_WORKER)) {
      ps.setString(1, workerId);
      var released = new LinkedHashMap<String, List<Long>>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          released.put(rs.getString(1), List.of((Long[]) rs.getArray(2).getArray()));
        }
      }
      return released;
    }
  }

  /** Gives back a claimed job that never started; its attempt is not spent. */
  public boolean jobRelease(Connection c, ClaimedJob job) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
      ps.setLong(1, job.id());
      ps.setInt(2, job.attempt());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** The state of job {@code id} while it waits or runs; null once it ended or is gone. */
  String jobWaitingOrRunning(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(WAITING_OR_RUNNING)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /**
   * Cancels a job that is still waiting to run, or asks the JVM that runs it to stop it (see {@link
   * #CANCEL}), and audits it as {@code actor} ({@code null}: the database role); false when it has
   * finished or does not exist.
   */
  public boolean jobCancel(Connection c, long id, String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CANCEL)) {
      ps.setLong(1, id);
      ps.setLong(2, id);
      ps.setString(3, actor);
      boolean acted;
      boolean linked;
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        acted = rs.getLong(1) == 1;
        linked = rs.getLong(3) == 1;
      }
      if (linked) {
        jobFinished(c, List.of(id));
      }
      return acted;
    }
  }

  /** Those of the requests whose attempt runs and had its cancel requested (CANCELS_REQUESTED). */
  public Set<CancelRequest> jobsCancelRequested(Connection c, Collection<CancelRequest> requests)
      throws SQLException {
    var confirmed = new HashSet<CancelRequest>();
    if (requests.isEmpty()) {
      return confirmed;
    }
    try (PreparedStatement ps = c.prepareStatement(CANCELS_REQUESTED)) {
      ps.setArray(1, c.createArrayOf("bigint", requests.stream().map(CancelRequest::id).toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          var found = new CancelRequest(rs.getLong(1), rs.getInt(2));
          if (requests.contains(found)) {
            confirmed.add(found);
          }
        }
      }
    }
    return confirmed;
  }

  /**
   * Makes a dead job available again with a fresh attempt budget, and wakes its queue. The attempt
   * counter is not reset, since it is the fence: a worker still holding the dead attempt must not
   * match the revived job. The budget grows by the job's max_attempts instead.
   */
  public boolean jobReplayDead(Connection c, long id, String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(REPLAY_DEAD)) {
      ps.setLong(1, id);
      ps.setString(2, actor);
      ps.setString(3, "replay");
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /** Returns expired leases to retryable (or dead); the count rescued per queue. */
  public Map<String, Long> jobRescueExpired(Connection c, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESCUE)) {
      ps.setInt(1, limit);
      ps.setInt(2, errorsKept - 1);
      var perQueue = new LinkedHashMap<String, Long>();
      var ended = new ArrayList<Long>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          perQueue.put(rs.getString(1), rs.getLong(2));
          Array dead = rs.getArray(4);
          if (dead != null) {
            ended.addAll(List.of((Long[]) dead.getArray()));
          }
        }
      }
      jobFinished(c, ended);
      return perQueue;
    }
  }

  /** The earliest waiting job of a queue, and whether it is due now by the database clock. */
  public record QueueHead(Instant runAt, boolean due) {}

  /**
   * The head of every given queue that has a waiting job and is not paused; other queues are
   * absent.
   */
  public Map<String, QueueHead> jobQueueHeads(Connection c, List<String> queues)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(QUEUE_HEADS)) {
      ps.setArray(1, textArray(c, queues));
      var heads = new LinkedHashMap<String, QueueHead>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          heads.put(
              rs.getString(1), new QueueHead(rs.getTimestamp(2).toInstant(), rs.getBoolean(3)));
        }
      }
      return heads;
    }
  }

  /**
   * The earliest run_at of a delayed or retrying job in these queues, paused ones left out, or null
   * when none.
   */
  public Instant jobNextDue(Connection c, List<String> queues) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(NEXT_DUE)) {
      ps.setArray(1, textArray(c, queues));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        Timestamp t = rs.getTimestamp(1);
        return t == null ? null : t.toInstant();
      }
    }
  }

  /** Deletes up to {@code batch} jobs in a final state that finished more than {@code age} ago. */
  public int jobPrune(Connection c, String finalState, Duration age, int batch)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PRUNE)) {
      ps.setString(1, finalState);
      ps.setLong(2, age.toMillis());
      ps.setInt(3, batch);
      ps.setString(4, finalState);
      ps.setLong(5, age.toMillis());
      return ps.executeUpdate();
    }
  }

  private static Array textArray(Connection c, List<String> values) throws SQLException {
    return c.createArrayOf("text", values.toArray(String[]::new));
  }

  static String truncate(String s) {
    if (s == null) {
      return "";
    }
    return s.length() <= ERROR_TEXT_LIMIT ? s : s.substring(0, ERROR_TEXT_LIMIT) + "...";
  }
}

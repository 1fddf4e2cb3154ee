-- Repeatable migration: "why isn't this job running?" (issue #28; docs/explain.md). Two read-only
-- functions for operators, the admin API, the console, the CLI and autoscalers:
--   pgbus.explain(job_id)        one job's state and its reasons, most blocking first, as jsonb;
--   pgbus.queue_blockers(queue)  per queue: waiting jobs, how many a free slot would take now, and
--                                how many are held back by each cause.
-- Off every hot path: nothing in the engine calls them, so nothing runs unless someone asks. Both
-- pin their search_path, only read (STABLE), and decide as pgbus.claim (R__claim.sql) does: when
-- the claim changes a rule, change it here too (ExplainTest creates each condition and checks the
-- engine then runs the job within the time given here).
--
-- A reason is {"code", "sentence", "evidence", "action", "resolves_at"}: code is one of the stable
-- lower_snake codes listed in docs/explain.md; sentence is one line for a person; evidence the ids,
-- times, counts and names it rests on; action what would unblock it (NULL when nothing needs
-- doing); resolves_at when it ends by itself, if it will (NULL: not by itself, or not known); error
-- the error text it rests on (a job's last error, the FIFO blocker's), NULL when none. An error
-- text is only ever in error, never in the sentence or the evidence: handlers build error texts
-- from payloads, and the admin API masks error with the payloads.

CREATE OR REPLACE FUNCTION pgbus.explain_reason(
    code text, sentence text, evidence jsonb, action text, resolves_at timestamptz,
    error text DEFAULT NULL)
  RETURNS jsonb
  LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
    SELECT jsonb_build_object('code', code, 'sentence', sentence,
                              'evidence', coalesce(evidence, '{}'::jsonb),
                              'action', action, 'resolves_at', resolves_at, 'error', error)
  $$;

-- The capsules of the fleet that read queue q, live or not, from pgbus.node (one row per JVM with
-- capsules). alive: the row was renewed within its heartbeat TTL, as NodeStore's "beating". slots:
-- the capsule's concurrency; busy: its executions in the queues it reads (distinct lanes among the
-- running jobs its JVM claimed from them, a job without a lane one of its own, as
-- pgbus.claim_executions counts). A row whose capsules are not what an engine writes reads as
-- none (pgbus.node_capsules_valid).
CREATE OR REPLACE FUNCTION pgbus.explain_readers(q text)
  RETURNS TABLE(worker text, host text, capsule text, queues text[], slots integer,
                alive boolean, seen_at timestamptz, busy integer, in_flight bigint[])
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
    SELECT n.worker_id, n.host, c.name, c.queues, c.concurrency,
           coalesce(n.seen_at > now() - make_interval(secs => n.heartbeat_ttl_ms / 1000.0), false),
           n.seen_at, coalesce(r.busy, 0), coalesce(r.ids, '{}')
      FROM pgbus.node n
     CROSS JOIN LATERAL jsonb_to_recordset(
             CASE WHEN pgbus.node_capsules_valid(n.capsules) THEN n.capsules ELSE '[]'::jsonb END)
             AS c(name text, queues text[], concurrency integer)
      LEFT JOIN LATERAL (
             SELECT (count(DISTINCT x.lane) + count(*) FILTER (WHERE x.lane IS NULL))::integer AS busy,
                    (array_agg(x.id ORDER BY x.id))[1:20] AS ids
               FROM pgbus.job x
              WHERE x.queue = ANY (c.queues) AND x.state = 'running'
                AND x.attempted_by = n.worker_id) r ON true
     WHERE q = ANY (c.queues)
     ORDER BY n.started_at, n.worker_id, c.name
  $$;

-- One job's state and why: see the header. NULL when there is no such job (also one deleted on
-- completion or pruned). Reasons of a waiting job, in this order (most blocking first): its
-- dependencies, its run_at (due later, retry backoff), the queue's pause, the readers (none live,
-- all busy), the queue's limits (rate window, global limit, key limit or FIFO head), claim floors;
-- when nothing holds it, runnable_now. A running job: running or running_dead_node. A finished one:
-- completed, dead, oversized or cancelled. A batch member also gets batch_callback_waiting while its
-- batch has members left.
CREATE OR REPLACE FUNCTION pgbus.explain(job_id bigint) RETURNS jsonb
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET jit = off
  AS $$
  DECLARE
    j pgbus.job;
    rs jsonb[] := '{}';
    blocked boolean := false;   -- a reason other than runnable_now holds the waiting job
    v_due boolean;
    v_err text;
    v_err_at text;
    v_deps jsonb;
    v_dep_waiting integer;
    v_dep_held integer;
    v_dep_cancel integer;
    v_pause record;             -- the pause
    v_readers jsonb;
    v_live integer;
    v_free integer;
    lim record;                 -- the queue's limit row
    v_wstart timestamptz;
    v_left integer;
    v_exec integer;
    v_running jsonb;
    v_blocker record;
    v_node record;              -- the running job's node
    v_ttl interval;
    v_leader text;
    v_leader_ttl integer;
    v_eta timestamptz;
    v_audit record;             -- an audit row
    v_batch record;             -- the batch
    v_tx record;                -- the oldest open transaction
    v_ahead bigint;
    v_pass double precision;  -- fair share: the job's tenant's pass (pgbus.claim_fair)
  BEGIN
    -- V33: a completed or cancelled job may have moved to pgbus.job_history (same columns).
    SELECT * INTO j FROM pgbus.job_all WHERE id = explain.job_id;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
    v_err := j.errors -> 0 ->> 'error';
    v_err_at := j.errors -> 0 ->> 'at';

    IF j.state = 'completed' THEN
      rs := rs || pgbus.explain_reason('completed',
        format('Job %s completed at %s, on attempt %s of %s.', j.id, j.finalized_at, j.attempt, j.max_attempts),
        jsonb_build_object('finalized_at', j.finalized_at, 'attempt', j.attempt,
                           'max_attempts', j.max_attempts, 'worker', j.attempted_by,
                           'result_kept', j.result IS NOT NULL),
        NULL, NULL);

    ELSIF j.state = 'dead' AND v_err LIKE 'payload for queue % bytes, over the limit of % bytes%' THEN
      -- Buried by the claim (R__claim.sql): its payload is over pgbus.setting.max_payload_bytes.
      rs := rs || pgbus.explain_reason('oversized',
        format('Job %s was moved aside at %s: its payload is over the payload limit of %s bytes.',
               j.id, j.finalized_at, (SELECT s.max_payload_bytes FROM pgbus.setting s)),
        jsonb_build_object('finalized_at', j.finalized_at,
                           'payload_bytes', octet_length(j.payload::text),
                           'max_payload_bytes', (SELECT s.max_payload_bytes FROM pgbus.setting s)),
        'Store the large data in a table of your own and enqueue its key; or raise pgbus.max-payload-bytes above the payload''s size and replay the job.',
        NULL, v_err);

    ELSIF j.state = 'dead' THEN
      rs := rs || pgbus.explain_reason('dead',
        format('Job %s died at %s after attempt %s of %s (its last error is in error).', j.id,
               j.finalized_at, j.attempt, j.max_attempts),
        jsonb_build_object('finalized_at', j.finalized_at, 'attempt', j.attempt,
                           'max_attempts', j.max_attempts, 'last_error_at', v_err_at,
                           'worker', j.attempted_by),
        'Fix the cause, then replay the job (JobQueue.replay, POST <admin API>/jobs/{id}/replay, or pgbus replay): it runs again with a fresh attempt budget.',
        NULL, v_err);

    ELSIF j.state = 'cancelled' AND v_err LIKE 'expired: not started by %' THEN
      -- Cancelled by the leader's expiry (JobStore.EXPIRE, V43): never claimed by its start_by.
      rs := rs || pgbus.explain_reason('expired',
        format('Job %s was not started by its start-by deadline %s and was cancelled at %s without running.',
               j.id, j.start_by, j.finalized_at),
        jsonb_build_object('start_by', j.start_by, 'finalized_at', j.finalized_at,
                           'attempt', j.attempt, 'run_at', j.run_at),
        'Enqueue it again with a later deadline (EnqueueOptions.startBy, pgbus.queue.<name>.max-wait), or find out why it waited: a paused queue, a limit, no capsule reading it.',
        NULL, v_err);

    ELSIF j.state = 'cancelled' THEN
      SELECT u.actor, u.at, u.detail INTO v_audit
        FROM pgbus.audit u
       WHERE u.job_id = j.id AND u.action = 'cancel'
       ORDER BY u.id DESC
       LIMIT 1;
      rs := rs || pgbus.explain_reason('cancelled',
        format('Job %s was cancelled at %s by %s.', j.id, coalesce(v_audit.at, j.finalized_at),
               coalesce(v_audit.actor, 'its handler or a dependency that failed (no audit entry)')),
        jsonb_build_object('finalized_at', j.finalized_at, 'by', v_audit.actor, 'audited_at', v_audit.at,
                           'attempt', j.attempt),
        NULL, NULL, v_err);

    ELSIF j.state = 'running' THEN
      SELECT nd.worker_id, nd.host, nd.seen_at, nd.heartbeat_ttl_ms INTO v_node
        FROM pgbus.node nd WHERE nd.worker_id = j.attempted_by;
      v_ttl := make_interval(secs => coalesce(v_node.heartbeat_ttl_ms, 30000) / 1000.0);
      SELECT l.holder, ln.heartbeat_ttl_ms INTO v_leader, v_leader_ttl
        FROM pgbus.leader l LEFT JOIN pgbus.node ln ON ln.worker_id = l.holder
       WHERE l.name = 'maintenance' AND l.expires_at > now();
      IF j.lease_expires_at < now() OR v_node.worker_id IS NULL OR v_node.heartbeat_ttl_ms IS NULL
         OR v_node.seen_at < now() - v_ttl * 2 / 3 THEN
        -- The leader's rescue (JobStore.RESCUE) takes it back: at its lease's end, or once the
        -- node's row is two thirds of its TTL old; the leader checks at least every third of its
        -- own TTL (pgbus.rescue-interval's ceiling).
        v_eta := CASE WHEN v_node.heartbeat_ttl_ms IS NULL THEN greatest(j.lease_expires_at, now())
                      ELSE least(greatest(j.lease_expires_at, now()),
                                 greatest(v_node.seen_at + v_ttl * 2 / 3, j.attempted_at + v_ttl * 2 / 3, now()))
                 END + make_interval(secs => coalesce(v_leader_ttl, v_node.heartbeat_ttl_ms, 30000) / 3000.0);
        rs := rs || pgbus.explain_reason('running_dead_node',
          format('Job %s was claimed at %s by %s, which %s; the rescue makes it %s by about %s.',
                 j.id, j.attempted_at, coalesce(j.attempted_by, '?'),
                 CASE WHEN v_node.worker_id IS NULL THEN 'has no node row left'
                      ELSE format('was last seen at %s', v_node.seen_at) END,
                 CASE WHEN j.attempt >= j.max_attempts THEN 'dead (last attempt)' ELSE 'retryable' END,
                 v_eta),
          jsonb_build_object('worker', j.attempted_by, 'host', v_node.host, 'last_seen', v_node.seen_at,
                             'heartbeat_ttl_ms', v_node.heartbeat_ttl_ms, 'since', j.attempted_at,
                             'lease_expires_at', j.lease_expires_at, 'attempt', j.attempt,
                             'max_attempts', j.max_attempts, 'leader', v_leader),
          CASE WHEN v_leader IS NULL
               THEN 'No maintenance leader is live: start any pgbus engine (pgbus.maintenance=true) and its rescue returns the job.'
               ELSE 'None needed: the maintenance leader rescues it.' END,
          CASE WHEN v_leader IS NULL THEN NULL ELSE v_eta END);
      ELSE
        rs := rs || pgbus.explain_reason('running',
          format('Job %s runs on %s since %s (attempt %s of %s); its node was seen at %s.',
                 j.id, j.attempted_by, j.attempted_at, j.attempt, j.max_attempts, v_node.seen_at),
          jsonb_build_object('worker', j.attempted_by, 'host', v_node.host, 'since', j.attempted_at,
                             'attempt', j.attempt, 'max_attempts', j.max_attempts,
                             'progress', j.progress, 'heartbeat', v_node.seen_at,
                             'lease_expires_at', j.lease_expires_at,
                             'cancel_requested', j.cancel_attempt IS NOT DISTINCT FROM j.attempt),
          NULL, NULL);
      END IF;

    ELSE
      -- Waiting: available, scheduled or retryable.
      v_due := j.run_at <= now();

      -- A start-by deadline that passed (V43): the claim refuses the job for good, and the
      -- leader's expiry cancels it within seconds.
      IF j.start_by IS NOT NULL AND j.start_by <= now() THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('expired',
          format('Job %s was not claimed by its start-by deadline %s: it never runs, and the maintenance leader cancels it.',
                 j.id, j.start_by),
          jsonb_build_object('start_by', j.start_by, 'run_at', j.run_at, 'attempt', j.attempt),
          'None: the job ends cancelled (expired). Enqueue it again with a later deadline if it must still run.',
          NULL);
      END IF;

      -- Dependencies (R__links.sql): the edges not completed yet.
      SELECT jsonb_agg(jsonb_build_object('job', d.depends_on,
                                          'state', coalesce(o.state::text, 'gone'),
                                          'edge', d.state, 'on_failure', d.on_failure)
                       ORDER BY d.depends_on),
             count(*) FILTER (WHERE d.state = 'waiting'),
             count(*) FILTER (WHERE d.state = 'failed' AND d.on_failure = 'hold'),
             count(*) FILTER (WHERE d.state = 'failed' AND d.on_failure = 'cancel')
        INTO v_deps, v_dep_waiting, v_dep_held, v_dep_cancel
        FROM pgbus.job_dependency d
        LEFT JOIN pgbus.job_all o ON o.id = d.depends_on
       WHERE d.job_id = j.id AND d.state <> 'completed';
      IF v_deps IS NOT NULL AND j.state = 'scheduled' THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('waiting_on_dependencies',
          format('Job %s waits for %s dependencies: %s still to complete, %s failed and held (on_failure hold).',
                 j.id, jsonb_array_length(v_deps), v_dep_waiting, v_dep_held),
          jsonb_build_object('dependencies', v_deps, 'waiting', v_dep_waiting, 'held', v_dep_held,
                             'rule', 'a failed dependency with on_failure cancel cancels this job; with hold it waits until the dependency is replayed and completes'),
          CASE WHEN v_dep_held > 0
               THEN 'Replay the failed dependencies listed with edge "failed" (they must complete), or cancel this job.'
               ELSE 'Wait for the dependencies to complete; explain them to see why they wait.' END,
          NULL);
      ELSIF NOT v_due THEN
        blocked := true;
        IF j.state = 'retryable' THEN
          rs := rs || pgbus.explain_reason('retry_backoff',
            format('Job %s failed attempt %s of %s and waits out its backoff until %s.',
                   j.id, j.attempt, j.max_attempts, j.run_at),
            jsonb_build_object('next_attempt_at', j.run_at, 'attempt', j.attempt,
                               'max_attempts', j.max_attempts, 'last_error_at', v_err_at),
            'Wait, or run it now: JobAdmin.retryNow, POST <admin API>/jobs/{id}/retry, or pgbus retry.',
            j.run_at, v_err);
        ELSE
          rs := rs || pgbus.explain_reason('due_later',
            format('Job %s is not due until %s.', j.id, j.run_at),
            jsonb_build_object('run_at', j.run_at, 'attempt', j.attempt),
            'Wait, or run it now: JobAdmin.retryNow, POST <admin API>/jobs/{id}/retry, or pgbus retry.',
            j.run_at);
        END IF;
      END IF;

      SELECT qp.paused_at, qp.paused_by,
             (SELECT u.actor FROM pgbus.audit u WHERE u.queue = j.queue AND u.action = 'pause'
               ORDER BY u.id DESC LIMIT 1) AS actor
        INTO v_pause
        FROM pgbus.queue_pause qp WHERE qp.queue = j.queue;
      IF FOUND THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('queue_paused',
          format('Queue %s is paused since %s by %s.', j.queue, v_pause.paused_at, coalesce(v_pause.actor, v_pause.paused_by, 'an unknown user')),
          jsonb_build_object('queue', j.queue, 'paused_at', v_pause.paused_at, 'paused_by', v_pause.paused_by,
                             'actor', v_pause.actor),
          'Resume the queue: JobQueue.resume, POST <admin API>/queues/{queue}/resume, pgbus resume, or SELECT pgbus.resume(queue).',
          NULL);
      END IF;

      SELECT jsonb_agg(jsonb_build_object('worker', r.worker, 'host', r.host, 'capsule', r.capsule,
                                          'queues', r.queues, 'slots', r.slots, 'busy', r.busy,
                                          'in_flight', r.in_flight, 'alive', r.alive,
                                          'seen_at', r.seen_at)),
             count(*) FILTER (WHERE r.alive),
             sum(greatest(r.slots - r.busy, 0)) FILTER (WHERE r.alive)
        INTO v_readers, v_live, v_free
        FROM pgbus.explain_readers(j.queue) r;
      IF v_live = 0 THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('no_live_reader',
          format('No live JVM of the fleet has a capsule that reads queue %s (%s capsules listed, none alive).',
                 j.queue, coalesce(jsonb_array_length(v_readers), 0)),
          jsonb_build_object('queue', j.queue, 'capsules', coalesce(v_readers, '[]'::jsonb),
                             'fleet', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                          'worker', nd.worker_id, 'host', nd.host,
                                          'seen_at', nd.seen_at, 'capsules', nd.capsules)
                                          ORDER BY nd.started_at), '[]'::jsonb)
                                         FROM pgbus.node nd)),
          format('Start or deploy an application with a capsule that reads %s (pgbus.capsule.<name>.queues).', j.queue),
          NULL);
      ELSIF v_free = 0 THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('readers_busy',
          format('Every slot of the %s live capsules that read queue %s is busy.', v_live, j.queue),
          jsonb_build_object('queue', j.queue, 'readers', v_readers),
          'Wait for a slot, or add slots (pgbus.capsule.<name>.concurrency) or instances.',
          NULL);
      END IF;

      SELECT * INTO lim FROM pgbus.queue_limit l WHERE l.queue = j.queue;
      IF FOUND THEN
        IF lim.rate_limit IS NOT NULL THEN
          v_wstart := pgbus.rate_window_start(lim.rate_window);
          v_left := pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count, v_wstart);
          IF v_left <= 0 THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('rate_window_spent',
              format('Queue %s started its %s jobs of the window that began at %s; the next window opens at %s.',
                     j.queue, lim.rate_limit, v_wstart, v_wstart + lim.rate_window),
              jsonb_build_object('rate_limit', lim.rate_limit, 'rate_window', lim.rate_window::text,
                                 'window_start', lim.rate_window_start, 'starts', lim.rate_count,
                                 'next_window_at', v_wstart + lim.rate_window),
              format('Wait for the next window, or raise pgbus.queue.%s.rate-limit.', j.queue),
              v_wstart + lim.rate_window);
          END IF;
        END IF;
        IF lim.global_concurrency IS NOT NULL THEN
          v_exec := pgbus.claim_executions(j.queue);
          IF v_exec >= lim.global_concurrency THEN
            SELECT jsonb_agg(jsonb_build_object('job', x.id, 'worker', x.attempted_by,
                                                'since', x.attempted_at, 'lane', x.lane))
              INTO v_running
              FROM (SELECT x.id, x.attempted_by, x.attempted_at, x.lane FROM pgbus.job x
                     WHERE x.queue = j.queue AND x.state = 'running' ORDER BY x.id LIMIT 20) x;
            blocked := true;
            rs := rs || pgbus.explain_reason('global_limit',
              format('Queue %s runs %s executions, its global limit is %s.', j.queue, v_exec, lim.global_concurrency),
              jsonb_build_object('global_concurrency', lim.global_concurrency, 'executions', v_exec,
                                 'running', v_running),
              format('Wait for a running job to finish, or raise pgbus.queue.%s.global-concurrency.', j.queue),
              NULL);
          END IF;
        END IF;
        -- Keys count only in a queue with a limit row (pgbus.claim_keyed).
        IF j.concurrency_key IS NOT NULL AND lim.key_fifo THEN
          SELECT o.id, o.state::text AS state, o.run_at, o.errors -> 0 ->> 'error' AS error INTO v_blocker
            FROM pgbus.job o
           WHERE o.queue = j.queue AND o.concurrency_key = j.concurrency_key AND o.id <> j.id
             AND (o.state = 'running'
                  OR (o.id < j.id AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                      AND (o.state <> 'dead' OR NOT lim.key_fifo_skip_dead)))
           ORDER BY o.state = 'running' DESC, o.id
           LIMIT 1;
          IF FOUND THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('fifo_head_blocked',
              format('Key %s of queue %s runs in enqueue order, and job %s (%s) comes first.',
                     j.concurrency_key, j.queue, v_blocker.id, v_blocker.state),
              jsonb_build_object('key', j.concurrency_key, 'blocking_job', v_blocker.id,
                                 'blocking_state', v_blocker.state, 'blocking_run_at', v_blocker.run_at,
                                 'skip_dead', lim.key_fifo_skip_dead),
              CASE v_blocker.state
                WHEN 'dead' THEN format('Replay or cancel job %s, or set pgbus.queue.%s.key-fifo-skip-dead=true.', v_blocker.id, j.queue)
                WHEN 'running' THEN format('Wait for job %s to finish.', v_blocker.id)
                ELSE format('Wait for job %s to run first (explain it), or cancel it.', v_blocker.id) END,
              CASE WHEN v_blocker.state IN ('available', 'scheduled', 'retryable')
                        AND v_blocker.run_at > now() THEN v_blocker.run_at END,
              v_blocker.error);
          END IF;
        ELSIF j.concurrency_key IS NOT NULL THEN
          SELECT count(*)::integer AS n, (array_agg(x.id ORDER BY x.id))[1:20] AS ids INTO v_blocker
            FROM pgbus.job x
           WHERE x.queue = j.queue AND x.concurrency_key = j.concurrency_key AND x.state = 'running';
          IF v_blocker.n >= coalesce(lim.key_concurrency, 1) THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('key_limit',
              format('Key %s of queue %s has %s running jobs, its limit is %s.',
                     j.concurrency_key, j.queue, v_blocker.n, coalesce(lim.key_concurrency, 1)),
              jsonb_build_object('key', j.concurrency_key, 'key_concurrency', coalesce(lim.key_concurrency, 1),
                                 'running', to_jsonb(v_blocker.ids)),
              format('Wait for a job of the key to finish, or raise pgbus.queue.%s.key-concurrency.', j.queue),
              NULL);
          END IF;
        END IF;
        -- Fair share (V50, pgbus.claim_fair): a due job of a fair queue
        -- waits for its tenant's turn while its key has due jobs ahead of it at its level, or has
        -- been served ahead of the queue's clock (the other tenants' jobs come first).
        IF lim.fair_key IS NOT NULL AND j.concurrency_key IS NOT NULL AND v_due THEN
          SELECT count(*) INTO v_ahead
            FROM (SELECT 1 FROM pgbus.job c
                   WHERE c.queue = j.queue AND c.concurrency_key = j.concurrency_key
                     AND c.priority = j.priority
                     AND c.state IN ('available', 'scheduled', 'retryable')
                     AND c.run_at <= now()
                     AND (c.run_at, c.id) < (j.run_at, j.id)
                   LIMIT 10000) c;
          SELECT p.pass INTO v_pass
            FROM pgbus.queue_fair_pass p
           WHERE p.queue = j.queue AND p.tenant = j.concurrency_key;
          IF v_ahead > 0 OR v_pass > lim.fair_clock THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('waiting_for_turn',
              format('Queue %s deals its jobs over its tenants in turn (fair share): key %s has %s due jobs ahead of this one and has been served %s turns ahead of the queue.',
                     j.queue, j.concurrency_key, v_ahead,
                     round(greatest(coalesce(v_pass, lim.fair_clock) - lim.fair_clock, 0)::numeric, 2)),
              jsonb_build_object('key', j.concurrency_key,
                                 'weight', coalesce((lim.fair_weights ->> j.concurrency_key)::integer, 1),
                                 'ahead', v_ahead, 'ahead_capped', v_ahead >= 10000,
                                 'pass', greatest(coalesce(v_pass, lim.fair_clock), lim.fair_clock),
                                 'clock', lim.fair_clock),
              format('Wait for its turn, or raise the key''s weight (pgbus.queue.%s.fair-weights).', j.queue),
              NULL);
          END IF;
        END IF;
      END IF;

      -- Claim floors (R__claim.sql, pgbus.claim_next_level): while a snapshot held open elsewhere
      -- keeps claims slow, capsules claim above per-level floors and may pass over a job with an
      -- older run_at until their next full claim, at most ClaimFloors.FULL_CLAIM_EVERY (10 s) away.
      -- A transaction open for 10 s is the sign (floors engage only while claims are slow).
      IF v_due THEN
        SELECT s.pid, s.xact_start, s.application_name, s.state INTO v_tx
          FROM pg_stat_activity s
         WHERE s.datname = current_database() AND s.pid <> pg_backend_pid()
           AND s.backend_xmin IS NOT NULL AND s.xact_start < now() - interval '10 seconds'
           AND s.xact_start < j.run_at
         ORDER BY s.xact_start
         LIMIT 1;
        IF FOUND THEN
          blocked := true;
          rs := rs || pgbus.explain_reason('claim_floors',
            format('A transaction open since %s (pid %s) holds back vacuum; slowed claims may start above floors and pass this job until their next full claim.',
                   v_tx.xact_start, v_tx.pid),
            jsonb_build_object('pid', v_tx.pid, 'xact_start', v_tx.xact_start,
                               'application_name', v_tx.application_name, 'backend_state', v_tx.state,
                               'full_claim_every_ms', 10000),
            format('End the long transaction (pid %s); otherwise the next full claim takes the job.', v_tx.pid),
            now() + interval '10 seconds');
        END IF;
      END IF;

      IF NOT blocked THEN
        SELECT count(*) INTO v_ahead
          FROM (SELECT 1 FROM pgbus.job c
                 WHERE c.queue = j.queue AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                   AND (c.priority, c.run_at, c.id) < (j.priority, j.run_at, j.id)
                 LIMIT 10000) c;
        rs := rs || pgbus.explain_reason('runnable_now',
          format('Job %s is due and nothing holds it back: the next claim of a capsule that reads %s takes it (%s due jobs ahead of it).',
                 j.id, j.queue, v_ahead),
          jsonb_build_object('due_since', j.run_at, 'ahead', v_ahead, 'ahead_capped', v_ahead >= 10000,
                             'free_slots', v_free),
          NULL, now());
      END IF;
    END IF;

    IF j.batch_id IS NOT NULL THEN
      SELECT k.id, k.size, k.pending, k.completed, k.dead, k.cancelled, k.callback_queue INTO v_batch
        FROM pgbus.batch k WHERE k.id = j.batch_id;
      IF FOUND AND v_batch.pending > 0 THEN
        rs := rs || pgbus.explain_reason('batch_callback_waiting',
          format('Job %s belongs to batch %s, whose callback (queue %s) waits for %s of its %s members.',
                 j.id, v_batch.id, v_batch.callback_queue, v_batch.pending, v_batch.size),
          jsonb_build_object('batch', v_batch.id, 'size', v_batch.size, 'pending', v_batch.pending,
                             'completed', v_batch.completed, 'dead', v_batch.dead, 'cancelled', v_batch.cancelled,
                             'callback_queue', v_batch.callback_queue),
          NULL, NULL);
      END IF;
    END IF;

    RETURN jsonb_build_object('job', j.id, 'queue', j.queue, 'state', j.state::text,
                              'reasons', to_jsonb(rs));
  END $$;

-- Per queue (one queue, or when queue is NULL every queue that has waiting jobs, is paused or has
-- a limit row): waiting jobs (available, scheduled, retryable), runnable_now (how many a free slot
-- that reads the queue would claim this instant), and one row per cause that holds back the rest
-- (cause NULL on the queue's total row, jobs NULL there). The cause rows and runnable_now partition
-- the waiting jobs: waiting = runnable_now + the sum of the queue's cause rows, each job counted
-- under its first cause in this order: waiting_on_dependencies, retry_backoff, due_later,
-- queue_paused, key_limit / fifo_head_blocked, then (for the due jobs left over the queue's
-- capacity) rate_window_spent or global_limit. Slots are assumed free: readers_busy and
-- no_live_reader are explain's reasons, not causes here, so that an autoscaler scales on
-- runnable_now from zero readers too.
--
-- jit = off: a count over 100,000 waiting jobs spent 3.7 s of its 4.3 s compiling (the planner's
-- cost of the EXISTS subplans crossed jit_above_cost), and ran in well under 100 ms without.
--
-- Cost: one statement per queue over the queue's range of job_claim_idx (its waiting jobs), with a
-- probe of job_key_running_idx per due keyed job and of job_dependency_job_idx per job that waits on
-- dependencies. A global limit counts lanes as one job each (the capacity in jobs of a slot that
-- groups is higher). Read only when called: the engine never calls it, metrics only when scraped.
CREATE OR REPLACE FUNCTION pgbus.queue_blockers_of(wanted text)
  RETURNS TABLE(queue text, waiting bigint, runnable_now bigint, cause text, jobs bigint)
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET jit = off
  AS $$
  DECLARE
    q text;
    c record;
    lim record;
    v_paused boolean;
    v_cap bigint;        -- jobs the queue's limits let start now; NULL: no limit
    v_rate_cap bigint;
    v_global_cap bigint;
    v_eligible bigint;
  BEGIN
    IF wanted IS NOT NULL THEN
      PERFORM pgbus.queue(wanted);  -- a bad name is refused with the rule it broke
    END IF;
    FOR q IN
      SELECT wanted WHERE wanted IS NOT NULL
      UNION ALL
      SELECT t.queue FROM (
        WITH RECURSIVE w(queue) AS (
          (SELECT j.queue::text FROM pgbus.job j
            WHERE j.state IN ('available', 'scheduled', 'retryable') ORDER BY j.queue LIMIT 1)
          UNION ALL
          SELECT (SELECT j.queue::text FROM pgbus.job j
                   WHERE j.state IN ('available', 'scheduled', 'retryable') AND j.queue::text > w.queue
                   ORDER BY j.queue LIMIT 1)
            FROM w WHERE w.queue IS NOT NULL)
        SELECT w.queue FROM w WHERE w.queue IS NOT NULL
        UNION
        SELECT p.queue::text FROM pgbus.queue_pause p
        UNION
        SELECT l.queue::text FROM pgbus.queue_limit l) t
       WHERE wanted IS NULL
       ORDER BY 1
    LOOP
      SELECT * INTO lim FROM pgbus.queue_limit l WHERE l.queue = q;
      v_paused := EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      IF lim.queue IS NULL THEN
        -- No limit row: no key counts, and the whole answer is one range of job_claim_idx.
        SELECT count(*) AS waiting,
               count(*) FILTER (WHERE w.deps) AS deps,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state = 'retryable') AS backoff,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state <> 'retryable') AS later,
               0::bigint AS key_limit, 0::bigint AS fifo,
               count(*) FILTER (WHERE w.due) AS eligible
          INTO c
          FROM (SELECT j.state, j.run_at <= now() AS due,
                       j.state = 'scheduled' AND j.linked
                         AND EXISTS (SELECT 1 FROM pgbus.job_dependency d
                                      WHERE d.job_id = j.id AND d.state <> 'completed') AS deps
                  FROM pgbus.job j
                 WHERE j.queue = q AND j.state IN ('available', 'scheduled', 'retryable')) w;
      ELSE
        SELECT count(*) AS waiting,
               count(*) FILTER (WHERE w.deps) AS deps,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state = 'retryable') AS backoff,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state <> 'retryable') AS later,
               count(*) FILTER (WHERE w.due AND w.key_blocked AND NOT lim.key_fifo) AS key_limit,
               count(*) FILTER (WHERE w.due AND w.key_blocked AND lim.key_fifo) AS fifo,
               count(*) FILTER (WHERE w.due AND NOT w.key_blocked) AS eligible
          INTO c
          FROM (SELECT j.state, j.run_at <= now() AS due,
                       j.state = 'scheduled' AND j.linked
                         AND EXISTS (SELECT 1 FROM pgbus.job_dependency d
                                      WHERE d.job_id = j.id AND d.state <> 'completed') AS deps,
                       -- Keys count only in a queue with a limit row (pgbus.claim_keyed). A due
                       -- keyed job is held when a claim would pass it now: without FIFO, when the
                       -- key's running jobs and its due jobs before it in claim order reach the
                       -- limit; with FIFO, when a job of its key runs, an older one waits (due or
                       -- not), or an older one lies dead (unless skipped).
                       coalesce(j.concurrency_key IS NOT NULL AND j.run_at <= now()
                         AND CASE WHEN lim.key_fifo
                                  THEN r.n IS NOT NULL OR j.fifo_rank > 1
                                       OR EXISTS (SELECT 1 FROM pgbus.job o
                                                   WHERE o.queue = q AND o.concurrency_key = j.concurrency_key
                                                     AND o.id < j.id AND o.state = 'dead'
                                                     AND NOT lim.key_fifo_skip_dead)
                                  ELSE coalesce(r.n, 0) + j.key_rank > coalesce(lim.key_concurrency, 1) END,
                         false) AS key_blocked
                  FROM (SELECT j.id, j.state, j.run_at, j.linked, j.concurrency_key,
                               row_number() OVER (
                                 PARTITION BY j.concurrency_key, j.run_at <= now()
                                 ORDER BY j.priority, j.run_at, j.id) AS key_rank,
                               row_number() OVER (PARTITION BY j.concurrency_key ORDER BY j.id) AS fifo_rank
                          FROM pgbus.job j
                         WHERE j.queue = q AND j.state IN ('available', 'scheduled', 'retryable')) j
                  -- The running jobs per key: one range of job_key_running_idx.
                  LEFT JOIN (SELECT x.concurrency_key, count(*) AS n
                               FROM pgbus.job x
                              WHERE x.queue = q AND x.state = 'running' AND x.concurrency_key IS NOT NULL
                              GROUP BY x.concurrency_key) r ON r.concurrency_key = j.concurrency_key) w;
      END IF;

      v_rate_cap := NULL;
      v_global_cap := NULL;
      IF lim.rate_limit IS NOT NULL THEN
        v_rate_cap := greatest(pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count,
                                               pgbus.rate_window_start(lim.rate_window)), 0);
      END IF;
      IF lim.global_concurrency IS NOT NULL THEN
        v_global_cap := greatest(lim.global_concurrency - pgbus.claim_executions(q), 0);
      END IF;
      v_cap := least(v_rate_cap, v_global_cap);  -- least ignores NULLs
      v_eligible := CASE WHEN v_paused THEN 0 ELSE c.eligible END;

      queue_blockers_of.queue := q;
      waiting := c.waiting;
      runnable_now := CASE WHEN v_cap IS NULL THEN v_eligible ELSE least(v_eligible, v_cap) END;
      cause := NULL;
      jobs := NULL;
      RETURN NEXT;
      FOR cause, jobs IN
        SELECT * FROM (VALUES
          ('waiting_on_dependencies', c.deps),
          ('retry_backoff', c.backoff),
          ('due_later', c.later),
          ('queue_paused', CASE WHEN v_paused THEN c.key_limit + c.fifo + c.eligible ELSE 0 END),
          ('key_limit', CASE WHEN v_paused THEN 0 ELSE c.key_limit END),
          ('fifo_head_blocked', CASE WHEN v_paused THEN 0 ELSE c.fifo END),
          ('rate_window_spent', CASE WHEN v_cap IS NOT NULL AND v_cap = v_rate_cap
                                     THEN v_eligible - runnable_now ELSE 0 END),
          ('global_limit', CASE WHEN v_cap IS NOT NULL AND v_cap IS DISTINCT FROM v_rate_cap
                                THEN v_eligible - runnable_now ELSE 0 END)) v(cause, jobs)
         WHERE v.jobs > 0
      LOOP
        RETURN NEXT;
      END LOOP;
    END LOOP;
  END $$;

-- The interface (the CLI, the admin API, the metrics and KEDA call it): a SQL function, since a
-- PL/pgSQL one may not name a parameter and a result column alike (queue). The work is in
-- pgbus.queue_blockers_of.
CREATE OR REPLACE FUNCTION pgbus.queue_blockers(queue text DEFAULT NULL)
  RETURNS TABLE(queue text, waiting bigint, runnable_now bigint, cause text, jobs bigint)
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$ SELECT * FROM pgbus.queue_blockers_of($1) $$;

-- The planner's estimate of pgbus.job's rows of one queue and state, for the queue list
-- (JobAdminStore.COUNTS, issue #27): EXPLAIN reads pg_class and the statistics (V58's MCV list of
-- the pairs, else the product of the columns'), never a row, so it costs the same at any size of
-- the table. An estimate: as fresh as the last ANALYZE, with reltuples scaled to the table's
-- current pages. VOLATILE, since PostgreSQL runs no utility statement (EXPLAIN) from a STABLE
-- function; it writes nothing. A literal (%L), not a parameter, so the plan is made with the value.
CREATE OR REPLACE FUNCTION pgbus.job_count_estimate(q text, s pgbus.job_state) RETURNS bigint
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE pg_catalog.format(
    'EXPLAIN (FORMAT JSON) SELECT 1 FROM pgbus.job j'
    ' WHERE j.queue OPERATOR(pg_catalog.=) %L::text AND j.state OPERATOR(pg_catalog.=) %L',
    q, s) INTO plan;
  RETURN ((plan OPERATOR(pg_catalog.->) 0 OPERATOR(pg_catalog.->) 'Plan')
          OPERATOR(pg_catalog.->>) 'Plan Rows')::numeric::bigint;
END
$$;

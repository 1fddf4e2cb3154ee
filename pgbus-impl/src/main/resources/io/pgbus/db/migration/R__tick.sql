-- Repeatable migration: the current definition of pgbus.tick, the one statement an idle engine
-- issues per poll ceiling (issue #14). See docs/schema.md, "The tick".
--
-- One call does what used to take four statements:
--   * the heartbeat (when beat): this node's seen_at, and the leases of the running jobs it vouches
--     for, renewed to lease_ms from now. The jobs are fenced on (id, attempt, running), like every
--     write after a claim: a job rescued or finished meanwhile is left alone.
--   * the self-probe of the listener (when probe_channel is given): a NOTIFY to this JVM's private
--     channel, delivered at the end of this statement (it runs in auto-commit).
--   * the leader check: the live holder of the lease leader_name and its time left.
--   * the poll: the head of each queue (its earliest waiting job and whether it is due by the
--     database's clock), paused queues left out, read by pgbus.queue_head (below).
-- The first row (queue NULL) carries the leader, whether this node's row was found, and how many
-- leases were renewed; one row per queue with a waiting job follows.
-- The run_at of a queue's earliest waiting job (available, scheduled or retryable), or NULL when it
-- has none; with delayed_only, of its earliest scheduled or retryable job (the capsule's alarm,
-- JobStore.NEXT_DUE). Read by the tick, the capsule and the admin API's oldest wait.
--
-- From job_claim_idx (queue, priority, run_at, id), one priority level at a time, as the claim
-- reads it (R__claim.sql): a probe finds the next level (ORDER BY priority LIMIT 1, priority above
-- the last one), and the level's first entry in run_at order is its head; the earliest of the
-- heads wins. A queue with jobs at k levels costs 2k + 1 probes. V40 dropped job_due_idx (queue,
-- run_at), which answered this in one probe but cost every enqueue and claim an index entry.
-- delayed_only filters out the level's available jobs one by one (the index does not hold them
-- apart); the capsule reads it only after a claim that left slots free, when the queue's due
-- available jobs have been taken, so few are passed over.
--
-- PL/pgSQL, so that each statement's plan is kept for the session (a SQL function with SET
-- clauses is planned again at every call). enable_sort off: no plan may read a queue's backlog
-- and sort it (a never-analyzed table, R__claim.sql's planner note); jit off: at ten million rows
-- the estimates pass jit_above_cost, and compiling costs more than the probes.
CREATE OR REPLACE FUNCTION pgbus.queue_head(queue text, delayed_only boolean DEFAULT false)
  RETURNS timestamptz
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET enable_sort = off
  SET jit = off
  AS $$
  #variable_conflict use_column
  DECLARE
    v_level integer;
    v_at    timestamptz;
    v_head  timestamptz;
  BEGIN
    SELECT j.priority INTO v_level FROM pgbus.job j
     WHERE j.queue::text = queue_head.queue
       AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
     ORDER BY j.priority LIMIT 1;
    WHILE v_level IS NOT NULL LOOP
      SELECT j.run_at INTO v_at FROM pgbus.job j
       WHERE j.queue::text = queue_head.queue
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
         AND j.priority = v_level
         AND (NOT queue_head.delayed_only OR j.state OPERATOR(pg_catalog.<>) 'available')
         -- Past its start-by deadline (V43) a job is due no more: the claim refuses it, and no
         -- capsule may wake for it before the leader cancels it.
         AND (j.start_by IS NULL OR j.start_by OPERATOR(pg_catalog.>) pg_catalog.now())
       ORDER BY j.run_at LIMIT 1;
      IF v_at < v_head OR v_head IS NULL THEN
        v_head := v_at;
      END IF;
      -- No row sets v_level to NULL, which ends the loop.
      SELECT j.priority INTO v_level FROM pgbus.job j
       WHERE j.queue::text = queue_head.queue
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
         AND j.priority > v_level
       ORDER BY j.priority LIMIT 1;
    END LOOP;
    RETURN v_head;
  END $$;

CREATE OR REPLACE FUNCTION pgbus.tick(
    queues        text[],
    worker        text,
    beat          boolean,
    job_ids       bigint[],
    job_attempts  integer[],
    lease_ms      double precision,
    probe_channel text,
    probe_payload text,
    leader_name   text)
  RETURNS TABLE (queue text, run_at timestamptz, due boolean,
                 leader text, leader_ms bigint, node_found boolean, renewed integer)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    v_found   boolean := NULL;
    v_renewed integer := 0;
  BEGIN
    IF tick.beat THEN
      UPDATE pgbus.node n SET seen_at = now() WHERE n.worker_id = tick.worker;
      v_found := FOUND;
      IF cardinality(tick.job_ids) > 0 THEN
        -- SKIP LOCKED: a held job whose row another transaction has locked is being finished
        -- (a worker's completion, maybe of a group of jobs) or renewed right now; the tick never
        -- waits for it. Waiting deadlocked with a group's completion, which locks its rows in
        -- another order (seen at 1,000 jobs/s under a held horizon). A job skipped here is
        -- renewed by the next beat, long before its lease runs out.
        UPDATE pgbus.job j
           SET lease_expires_at = now() + tick.lease_ms * interval '1 millisecond'
          FROM (SELECT x.id
                  FROM pgbus.job x
                  JOIN unnest(tick.job_ids, tick.job_attempts) AS held(id, attempt)
                    ON x.id = held.id AND x.attempt = held.attempt
                 WHERE x.state::text = 'running'  -- by primary key, never job_lease_idx (below)
                   FOR UPDATE OF x SKIP LOCKED) k
         WHERE j.id = k.id;
        GET DIAGNOSTICS v_renewed = ROW_COUNT;
      END IF;
    END IF;
    IF tick.probe_channel IS NOT NULL THEN
      PERFORM pg_notify(tick.probe_channel, tick.probe_payload);
    END IF;
    RETURN QUERY
      SELECT NULL::text, NULL::timestamptz, NULL::boolean, l.holder,
             ceil(extract(epoch FROM l.expires_at - now())::numeric * 1000.0)::bigint,
             v_found, v_renewed
        FROM (SELECT 1) one
        LEFT JOIN pgbus.leader l ON l.name = tick.leader_name AND l.expires_at > now()
              -- A lease no elector wrote (LeaderStore.FORGED) is free; 'infinity' would fail the
              -- subtraction above, and with it every JVM's tick.
              AND l.expires_at <= now() + interval '1 hour';
    RETURN QUERY
      SELECT q.queue, h.run_at, h.run_at <= now(), NULL::text, NULL::bigint, NULL::boolean,
             NULL::integer
        FROM unnest(tick.queues) AS q(queue)
        CROSS JOIN LATERAL (SELECT pgbus.queue_head(q.queue) AS run_at) h
       WHERE h.run_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = q.queue);
  END $$;

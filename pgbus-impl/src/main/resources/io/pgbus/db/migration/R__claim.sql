-- Repeatable migration: the current definition of pgbus.claim. Flyway applies it after the
-- versioned migrations and again whenever this file changes. See docs/schema.md, "The claim and
-- its contract".
--
-- Claims up to max_jobs runnable jobs from queues, in strict queue order: every claimable job of
-- queues[1] is taken before any job of queues[2] is looked at, and so on. Inside a queue the order
-- is priority, then run_at, then id. A paused queue is skipped, as if it had no claimable job.
--
-- Why a loop and not one UNION ALL: a UNION's append order is planner behaviour, not a contract,
-- and a LATERAL join with a LIMIT per queue would lock rows of later queues that the outer LIMIT
-- then throws away. Here each queue is visited only while capacity remains, and each inner
-- SELECT ... LIMIT n FOR UPDATE SKIP LOCKED locks exactly the rows it returns (LockRows sits below
-- Limit), all of which the UPDATE then claims. A claim that finds nothing locks nothing.
--
-- The pause check is a primary-key probe on a tiny table, once per visited queue. A pause does
-- not interrupt a claim that is already running: a statement that started before the pause
-- committed may still take jobs. From the next claim on, none.
--
-- A job whose payload is over the limit (inserted before V5, by a plain INSERT, or before the
-- limit was lowered) is not returned. It goes to dead with an error that names its size and the
-- limit, in the statement that would have claimed it, so its payload never leaves the database; a
-- replay after raising the limit revives it. Its slot is given to the next job of the same queue
-- (the inner loop), so strict queue order holds. The size check costs nothing for small payloads:
-- only a payload whose stored size exceeds the limit / 1536 has its JSON text measured. 1536 = 6
-- (JSON text vs binary, see pgbus.check_payload) x 256 (the best ratio of pglz or lz4
-- compression, which pg_column_size sees through).
--
-- Planner note (issue #15, "a cold table under a burst"): the plan must not depend on statistics.
-- A queue is read one priority level at a time. A probe finds the queue's lowest priority level
-- above the last one visited (ORDER BY priority LIMIT 1 with queue = q AND priority > prio: a range
-- of job_claim_idx, already in order), and the claim proper takes that level's due jobs with
-- queue = q AND priority = prio AND run_at <= now() ORDER BY run_at, id: again one range of
-- job_claim_idx, already in order, and one no other index can undercut, since every boundary it
-- has (queue, priority, run_at) narrows job_claim_idx further than job_due_idx (queue, run_at)
-- and the order comes free. The older shape, queue = q ORDER BY priority, run_at, id, did depend
-- on statistics: on a table that autovacuum had not analyzed yet, the planner's default
-- selectivities made job_due_idx's (queue, run_at) range look narrower, and it read and sorted
-- the whole backlog of the queue on every claim (about 90 ms per claim against 100,000 waiting jobs
-- on a loaded 2-core machine, under 1 ms once analyzed). ColdTableClaimTest keeps it so: it claims
-- from a never-analyzed table with auto_explain on and fails on a Sort over pgbus.job. The
-- per-level shape also means not-yet-due jobs of a level are never walked: the run_at bound
-- ends the range, where the older shape filtered them one by one.
CREATE OR REPLACE FUNCTION pgbus.claim(
    queues   text[],
    max_jobs integer,
    worker   text,
    lease    interval)
  RETURNS SETOF pgbus.job
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET enable_sort = off
  SET jit = off
  AS $$
  DECLARE
    q text;
    prio smallint;
    remaining integer := max_jobs;
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    buried integer;
    r record;
  BEGIN
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      prio := -32768;  -- below any priority (the column's check allows -100..100)
      LOOP
        -- The queue's next priority level with a waiting job, due or not.
        SELECT c.priority INTO prio
          FROM pgbus.job c
         WHERE c.queue = q
           AND c.state IN ('available', 'scheduled', 'retryable')
           AND c.priority > prio
         ORDER BY c.priority
         LIMIT 1;
        EXIT WHEN NOT FOUND;
        LOOP
          buried := 0;
          FOR r IN
            WITH picked AS (
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pgbus.job c
               WHERE c.queue = q
                 AND c.priority = prio
                 AND c.state IN ('available', 'scheduled', 'retryable')
                 AND c.run_at <= now()
               ORDER BY c.priority, c.run_at, c.id
               LIMIT remaining
               FOR UPDATE SKIP LOCKED
            ), claimed AS (
              UPDATE pgbus.job j
                 SET state = CASE WHEN p.bytes > v_limit THEN 'dead' ELSE 'running' END::job_state,
                     attempt = j.attempt + 1,
                     attempted_at = now(),
                     attempted_by = worker,
                     lease_expires_at = CASE WHEN p.bytes > v_limit THEN NULL ELSE now() + lease END,
                     finalized_at = CASE WHEN p.bytes > v_limit THEN now() END,
                     errors = CASE WHEN p.bytes > v_limit
                       THEN jsonb_path_query_array(
                              jsonb_build_array(jsonb_build_object(
                                'attempt', j.attempt + 1, 'at', now(),
                                'error', format('payload for queue ''%s'' is %s bytes, over the limit of %s bytes:'
                                                ' not claimed; store large data in your own table and enqueue'
                                                ' its key, or raise pgbus.max-payload-bytes and replay the job',
                                                j.queue, p.bytes, v_limit)))
                                || j.errors,
                              '$[0 to 9]')
                       ELSE j.errors END
                FROM picked p
               WHERE j.id = p.id
              RETURNING j, p.bytes > v_limit AS oversized)
            SELECT c.j AS job, coalesce(c.oversized, false) AS oversized
              FROM claimed c
             ORDER BY (c.j).priority, (c.j).run_at, (c.j).id
          LOOP
            IF r.oversized THEN
              buried := buried + 1;
            ELSE
              remaining := remaining - 1;
              RETURN NEXT r.job;
            END IF;
          END LOOP;
          EXIT WHEN buried = 0 OR remaining <= 0;
        END LOOP;
        EXIT WHEN remaining <= 0;
      END LOOP;
    END LOOP;
  END $$;

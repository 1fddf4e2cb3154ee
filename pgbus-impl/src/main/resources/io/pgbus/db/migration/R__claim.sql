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
--
-- Flow control (V14, issue #16; docs/schema.md, "Flow control"). A queue with a row in
-- pgbus.queue_limit is limited: at most global_concurrency of its jobs run at once across the
-- fleet, and at most key_concurrency (NULL: 1) per concurrency key. A queue without a row pays one
-- primary-key probe that finds nothing, like the pause check, and takes no lock.
--
-- The concurrency argument. A claim that visits a limited queue first locks its limit row (FOR
-- UPDATE), so the claims of one limited queue take turns, each for the few milliseconds of its
-- statement (a claim runs in autocommit). Only under that lock does it count the queue's running
-- jobs, in a statement of its own and so with a fresh snapshot (READ COMMITTED; a claim in any
-- other isolation raises, since a snapshot taken before the lock would miss the turn before it).
-- The claim before it committed before it released the row, so its jobs are in that count. A job
-- becomes running only here, under the row lock; every other change of a running job (complete,
-- fail, snooze, cancel, rescue, release) only lowers the count, and a count that missed one is
-- too high, never too low. So the running jobs never exceed the limit, and a claim takes at most
-- limit - running. The per-key count is the same argument per key, with the jobs this claim
-- takes counted too (row_number per key over the candidates in claim order).
--
-- No deadlock: a claim waits for a limit row only while it holds none. At a second limited queue
-- it takes the row FOR UPDATE SKIP LOCKED, and if another claim holds it, it skips the queue and
-- sends the queue's wake-up (delivered at its commit), so the capacity it could not look at is
-- claimed by the next round rather than at the next poll. Nothing else waits for a limit row
-- while holding a job row: pgbus.queue_limit_set and the enqueue of a keyed job (INSERT ... ON
-- CONFLICT DO NOTHING does not wait for a row lock) touch no job row first. A claim that finds
-- no capacity locks no job row; the limit row it held goes at its commit.
--
-- Key-limited candidates: a claim reads the due jobs of a priority level in claim order, a window
-- of them at a time (first 4 x what it may take + 32), drops those whose key is at its limit
-- (running ones counted through job_key_running_idx) and takes the first of the rest. When that
-- leaves it short and the window was full, it widens the window fourfold, up to 10,000 jobs: a key
-- with thousands of waiting jobs at the head of the queue delays the others by at most that scan,
-- and one further than 10,000 jobs deep waits until the head drains.
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
    lim record;          -- the queue's pgbus.queue_limit row, when it has one
    limited boolean;
    holding boolean := false;  -- this claim holds a limit row (until its commit)
    q_left integer;      -- what this queue may still take
    keyed boolean;       -- the queue counts running jobs per concurrency key
    v_ids bigint[];      -- keyed: the candidates that keep every key within its limit
    v_window integer;
    v_seen integer;
  BEGIN
    -- The queue list's limit, as CapsuleConfig.MAX_QUEUES in Java (docs/configuration.md, "Limits").
    IF pg_catalog.cardinality(queues) > 1000 THEN
      RAISE EXCEPTION 'pgbus: a claim of % queues is over the limit of 1000 queues per claim: split them over several capsules', pg_catalog.cardinality(queues)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      IF NOT holding THEN
        SELECT l.global_concurrency, l.key_concurrency INTO lim
          FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE;
        limited := FOUND;
      ELSE
        SELECT l.global_concurrency, l.key_concurrency INTO lim
          FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE SKIP LOCKED;
        limited := FOUND;
        IF NOT limited AND EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = q) THEN
          PERFORM pgbus.notify(q, now());  -- another claim holds it: come back after its commit
          CONTINUE;
        END IF;
      END IF;
      q_left := remaining;
      keyed := false;
      IF limited THEN
        holding := true;
        IF current_setting('transaction_isolation') <> 'read committed' THEN
          RAISE EXCEPTION 'pgbus: claiming from limited queue % needs READ COMMITTED, not %: run pgbus.claim in its own transaction',
            q, current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state';
        END IF;
        IF lim.global_concurrency IS NOT NULL THEN
          q_left := least(remaining, lim.global_concurrency
                                     - (SELECT count(*) FROM pgbus.job x
                                         WHERE x.queue = q AND x.state = 'running')::integer);
          CONTINUE WHEN q_left <= 0;
        END IF;
        keyed := true;
      END IF;
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
          IF keyed THEN
            v_window := q_left * 4 + 32;
            LOOP
              WITH win AS (
                SELECT c.id, c.run_at, c.concurrency_key
                  FROM pgbus.job c
                 WHERE c.queue = q
                   AND c.priority = prio
                   AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                 ORDER BY c.priority, c.run_at, c.id
                 LIMIT v_window
              ), ranked AS (
                SELECT w.id, w.run_at, w.concurrency_key,
                       row_number() OVER (PARTITION BY w.concurrency_key ORDER BY w.run_at, w.id) AS n
                  FROM win w
              ), busy AS (
                SELECT x.concurrency_key, count(*) AS n
                  FROM pgbus.job x
                 WHERE x.queue = q AND x.state = 'running' AND x.concurrency_key IS NOT NULL
                 GROUP BY x.concurrency_key
              ), ok AS (
                SELECT k.id, k.run_at
                  FROM ranked k LEFT JOIN busy b ON b.concurrency_key = k.concurrency_key
                 WHERE k.concurrency_key IS NULL
                    OR k.n + coalesce(b.n, 0) <= coalesce(lim.key_concurrency, 1)
                 ORDER BY k.run_at, k.id
                 LIMIT q_left
              )
              SELECT (SELECT count(*) FROM win),
                     coalesce((SELECT array_agg(o.id ORDER BY o.run_at, o.id) FROM ok o), '{}')
                INTO v_seen, v_ids;
              EXIT WHEN cardinality(v_ids) >= q_left OR v_seen < v_window OR v_window >= 10000;
              v_window := least(v_window * 4, 10000);
            END LOOP;
            EXIT WHEN cardinality(v_ids) = 0;
          END IF;
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
                 AND (NOT keyed OR c.id = ANY (v_ids))
               ORDER BY c.priority, c.run_at, c.id
               LIMIT q_left
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
              q_left := q_left - 1;
              RETURN NEXT r.job;
            END IF;
          END LOOP;
          EXIT WHEN buried = 0 OR q_left <= 0;
        END LOOP;
        EXIT WHEN q_left <= 0;
      END LOOP;
    END LOOP;
  END $$;

-- Repeatable migration: the current definition of the claim (pgbus.claim_jobs, the engine's since
-- issue #27, and pgbus.claim over it, the previous releases') and of the decisions it hands
-- to helpers, each defined below it with a header of its own:
--   pgbus.claim_budget      what a limited queue may take in this claim: limits, rate window, lanes;
--   pgbus.claim_next_level  the queue's next priority level, when the caller passed floors;
--   pgbus.claim_keyed       which due jobs of a level a keyed queue may take: per-key limits, FIFO;
--   pgbus.claim_fair        the same for a fair queue, dealt over its tenants (issue #30).
-- Flyway applies it after the versioned migrations and again whenever this file changes. See
-- docs/schema.md, "The claim and its contract".
--
-- pgbus.claim's and pgbus.claim_jobs's signatures are contracts running releases call, so neither
-- changes here; the helpers are called by pgbus.claim_jobs's body alone. A helper cannot be inlined (a function that pins
-- search_path never is), so each costs a PL/pgSQL call: the plain path (a queue without a limit row,
-- a claim without floors) calls none of them. A helper whose parameters or result change is dropped
-- first (CREATE OR REPLACE cannot change either), in this file, before the claim that calls it.
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
-- committed may still take jobs. From the next claim on, none. A queue without a pgbus.queue_limit
-- row pays one more such probe, that finds nothing and takes no lock.
--
-- A job whose payload is over the limit (inserted before V5, by a plain INSERT, or before the
-- limit was lowered) is not returned. It goes to dead with an error that names its size and the
-- limit, in the statement that would have claimed it, so its payload never leaves the database; a
-- replay after raising the limit revives it. Its slot is given to the next job of the same queue
-- (the inner loop), so strict queue order holds. The size check costs nothing for small payloads:
-- only a payload whose stored size exceeds the limit / 1536 has its JSON text measured. 1536 = 6
-- (JSON text vs binary, see pgbus.check_payload) x 256 (the best ratio of pglz or lz4
-- compression, which pg_column_size sees through). A buried job in a batch or with dependents
-- (linked, V16) is reported to pgbus.job_finished (R__links.sql) at the end of the same claim, as
-- any dead job is by the statement that killed it: its batch counts it dead (and the last member
-- fires the callback), its dependents are cancelled or held as set. At the end, once: every job
-- row this claim takes is locked by then, and the batches are visited in id order.
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
-- Lanes (V19; docs/schema.md, "Flow control"). A caller that passes lanes (the engine passes its
-- free slots) gets its jobs dealt over at most that many lanes, round-robin in claim order, each
-- job's lane written to pgbus.job.lane (txid of this claim x 65536 + the lane's index: unique
-- across the fleet, since no two claims share a transaction id), and it runs the jobs of one lane
-- one after another, never two at once. A queue's executions are therefore the distinct lanes
-- among its running jobs (a job claimed without lanes, lane NULL, is a lane of its own), which is
-- what a global limit bounds (pgbus.claim_budget says how many lanes a limited queue may open).
--
-- Rate limit (V19): the starts this claim made in a rate-limited queue are added to the row's
-- rate_count at the end of the queue, under the row lock pgbus.claim_budget took.
--
-- Claim floors (issue #15, "a long transaction elsewhere"; docs/schema.md, "Claim floors"):
-- floor_queues, floor_priorities and floor_run_ats (one entry per queue and level, NULL or empty:
-- none) give a caller's lower bound on run_at per level; pgbus.claim_next_level says why and how.
-- A limited queue ignores floors: a keyed job passed over because its key is busy stays behind
-- the jobs claimed after it, and a floor would hide it.
--
-- The result (issue #27, "a claim whose result type survives"): pgbus.claim_jobs returns the columns
-- the engine reads, by name and base type, and never the row type of pgbus.job. A later release's
-- ALTER TABLE pgbus.job ADD COLUMN changes that row type under the running engines, and a session
-- that had claimed before kept the old one cached: in the caller's plan and in this function's own
-- expressions over a whole-row record, so its next claim failed with "returned record type does
-- not match expected record type" or "type of parameter ... does not match that when preparing the
-- plan" (the 0.1.0 upgrade under load: docs/operations.md, "A large database under load"). So the
-- body names every column it returns and holds no whole row of pgbus.job. The columns never
-- change here (CREATE OR REPLACE cannot change them either); a release that needs another one adds
-- a function of its own. ClaimResultTypeTest widens pgbus.job under claiming sessions.
CREATE OR REPLACE FUNCTION pgbus.claim_jobs(
    queues   text[],
    max_jobs integer,
    worker   text,
    lease    interval,
    lanes    integer DEFAULT NULL,
    floor_queues     text[] DEFAULT NULL,
    floor_priorities integer[] DEFAULT NULL,
    floor_run_ats    timestamptz[] DEFAULT NULL)
  RETURNS TABLE (
    job_id bigint, job_queue text, job_priority smallint, job_payload jsonb, job_attempt integer,
    job_max_attempts integer, job_created_at timestamptz, job_run_at timestamptz,
    job_trace_parent text, job_trace_state text, job_lane bigint, job_attempt_base integer,
    job_run_as text, job_linked boolean)
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
    b record;            -- a limited queue's budget (pgbus.claim_budget)
    holding boolean := false;  -- this claim holds a limit row (until its commit)
    q_left integer;      -- what this queue may still take
    keyed boolean;       -- the queue counts running jobs per concurrency key
    fair boolean;        -- the queue deals its levels over its tenants (pgbus.claim_fair)
    v_ids bigint[];      -- keyed: the candidates that keep every key within its limit; NULL: no key
    v_buried bigint[];   -- buried linked jobs, reported to their batches and dependents at the end
    v_lanes integer := lanes;        -- NULL: every job a lane of its own (lane NULL)
    v_per_lane integer;              -- jobs per lane the caller asked for, rounded up
    v_taken integer := 0;            -- rows this claim updated so far: the round-robin position
    q_base integer;                  -- the lane this queue's first job goes to
    q_lanes integer;                 -- how many lanes this queue's jobs may use
    q_taken integer;                 -- rows of this queue updated so far
    q_started integer;               -- jobs of this queue claimed (not buried) so far
    v_rate_left integer;             -- rate: starts the window still allows; NULL: no rate limit
    f_levels integer[];              -- floors: the queue's levels that have one, ascending
    f_run_ats timestamptz[];         -- floors: each level's floor
    v_floor timestamptz;             -- the floor of the level being claimed; NULL: none
  BEGIN
    -- The worker id goes into attempted_by, which logs and the console show: as WorkerIds.check in
    -- Java, 1 to 255 characters and no control character (a newline forges a log line; issue #23).
    IF worker IS NULL OR pg_catalog.length(worker) NOT BETWEEN 1 AND 255
       OR worker ~ '[\x01-\x1f\x7f-\x9f\u2028\u2029]' THEN
      RAISE EXCEPTION 'pgbus: the worker id % is invalid: use 1 to 255 characters without control characters (pgbus.worker-id)',
        pg_catalog.quote_literal(pg_catalog.regexp_replace(pg_catalog.left(worker, 80),
                                 '[\x01-\x1f\x7f-\x9f\u2028\u2029]', '?', 'g'))
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The queue list's limit, as CapsuleConfig.MAX_QUEUES in Java (docs/configuration.md, "Limits").
    IF pg_catalog.cardinality(queues) > 1000 THEN
      RAISE EXCEPTION 'pgbus: a claim of % queues is over the limit of 1000 queues per claim: split them over several capsules', pg_catalog.cardinality(queues)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF v_lanes IS NOT NULL AND (v_lanes NOT BETWEEN 1 AND 65536) THEN
      RAISE EXCEPTION 'pgbus: claim lanes % is invalid: use 1 to 65536, or NULL for a lane per job', v_lanes
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Claim floors (docs/schema.md, "Claim floors"): three arrays of one length, at most one entry
    -- per queue and priority level (1,000 queues x 201 levels).
    IF coalesce(pg_catalog.cardinality(floor_queues), 0) <> coalesce(pg_catalog.cardinality(floor_priorities), 0)
       OR coalesce(pg_catalog.cardinality(floor_queues), 0) <> coalesce(pg_catalog.cardinality(floor_run_ats), 0) THEN
      RAISE EXCEPTION 'pgbus: claim floors need floor_queues, floor_priorities and floor_run_ats of one length, not %, % and %',
        coalesce(pg_catalog.cardinality(floor_queues), 0), coalesce(pg_catalog.cardinality(floor_priorities), 0),
        coalesce(pg_catalog.cardinality(floor_run_ats), 0)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(floor_queues) > 201000 THEN
      RAISE EXCEPTION 'pgbus: % claim floors are over the limit of 201000 (1000 queues x 201 priority levels)', pg_catalog.cardinality(floor_queues)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    v_lanes := least(v_lanes, greatest(max_jobs, 1));
    v_per_lane := CASE WHEN v_lanes IS NULL THEN 1 ELSE (max_jobs + v_lanes - 1) / v_lanes END;
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      q_left := remaining;
      q_lanes := coalesce(v_lanes, 1);
      keyed := false;
      v_rate_left := NULL;
      -- The same one probe of the limit row as an EXISTS, which also says whether the queue is
      -- fair (NULL when there is no row).
      SELECT l.fair_key IS NOT NULL INTO fair FROM pgbus.queue_limit l WHERE l.queue = q;
      fair := coalesce(fair, false);
      IF FOUND THEN
        SELECT * INTO b FROM pgbus.claim_budget(q, remaining, max_jobs, v_lanes, v_per_lane, holding);
        holding := holding OR b.locked;  -- held to this claim's commit, also when it takes nothing
        CONTINUE WHEN b.take = 0;
        q_left := b.take;
        q_lanes := b.take_lanes;
        keyed := b.locked;
        fair := fair AND keyed;
        v_rate_left := b.rate_left;
      END IF;
      q_base := v_taken % coalesce(v_lanes, 1);
      q_taken := 0;
      q_started := 0;
      prio := -32768;  -- below any priority (the column's check allows -100..100)
      f_levels := NULL;
      f_run_ats := NULL;
      -- q = ANY (...) is a simple expression (no statement): a queue without a floor pays only
      -- that scan of the array.
      IF floor_queues IS NOT NULL AND NOT keyed AND q = ANY (floor_queues) THEN
        SELECT pg_catalog.array_agg(f.p ORDER BY f.p), pg_catalog.array_agg(f.r ORDER BY f.p)
          INTO f_levels, f_run_ats
          FROM ROWS FROM (pg_catalog.unnest(floor_queues), pg_catalog.unnest(floor_priorities),
                         pg_catalog.unnest(floor_run_ats)) AS f(fq, p, r)
         WHERE f.fq = q AND f.p IS NOT NULL AND f.r IS NOT NULL;
      END IF;
      LOOP
        v_floor := NULL;
        IF f_levels IS NULL THEN
          -- The queue's next priority level with a waiting job, due or not.
          SELECT c.priority INTO prio
            FROM pgbus.job c
           WHERE c.queue = q
             AND c.state IN ('available', 'scheduled', 'retryable')
             AND c.priority > prio
           ORDER BY c.priority
           LIMIT 1;
          EXIT WHEN NOT FOUND;
        ELSE
          SELECT n.level, n.level_floor INTO prio, v_floor
            FROM pgbus.claim_next_level(q, prio, f_levels, f_run_ats) n;
          EXIT WHEN prio IS NULL;
        END IF;
        LOOP
          buried := 0;
          v_ids := NULL;
          IF fair THEN
            v_ids := pgbus.claim_fair(q, prio, q_left, b.key_concurrency, b.key_fifo,
                                      b.key_fifo_skip_dead);
            EXIT WHEN pg_catalog.cardinality(v_ids) = 0;  -- no tenant may start a job now
          ELSIF keyed THEN
            v_ids := pgbus.claim_keyed(q, prio, q_left, b.key_concurrency, b.key_fifo,
                                       b.key_fifo_skip_dead);
            EXIT WHEN pg_catalog.cardinality(v_ids) = 0;  -- every candidate's key is at its limit
          END IF;
          FOR r IN
            WITH picked AS (
              -- Not a fair queue: the level's due jobs in claim order (a fair one: nothing here,
              -- a one-time filter).
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pgbus.job c
               WHERE c.queue = q
                 AND c.priority = prio
                 AND c.state IN ('available', 'scheduled', 'retryable')
                 AND c.run_at <= now()
                 AND c.run_at >= coalesce(v_floor, '-infinity'::timestamptz)
                 -- A start-by deadline (V43) that passed: never claimed, whatever the leader's
                 -- expiry has done yet. A filter on the rows the range scan reads, no index
                 -- condition: NULL for nearly every job, and a late job stays only until the
                 -- leader cancels it.
                 AND (c.start_by IS NULL OR c.start_by > now())
                 -- No window: a keyed job that a skipped lock brought into reach waits for a
                 -- claim that sees it among the first candidates.
                 AND CASE WHEN v_ids IS NOT NULL THEN c.id = ANY (v_ids)
                          WHEN keyed THEN c.concurrency_key IS NULL
                          ELSE true END
                 AND NOT fair
               ORDER BY c.priority, c.run_at, c.id
               LIMIT q_left
               FOR UPDATE SKIP LOCKED
            ), picked_fair AS (
              -- A fair queue: the ids pgbus.claim_fair dealt, each a probe of the primary key
              -- (a nested loop over the array), rechecked under the lock. Planner trap: with the
              -- recheck written as plain conditions (c.queue = q, c.state IN (...), ...), a table
              -- never analyzed makes job_claim_idx's range of the queue look like one row, and
              -- the planner read that range with the ids as a filter: a tenant's job behind
              -- another's backlog of 100,000 was found at the end of that walk. Inside a CASE
              -- they match no index (nor job_claim_idx's predicate), so the primary key is the
              -- only way in. Unordered: only lanes depend on the order.
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pg_catalog.unnest(v_ids) AS u(id)
                JOIN pgbus.job c ON c.id = u.id
               WHERE fair
                 AND CASE WHEN c.queue = q
                           AND c.state IN ('available', 'scheduled', 'retryable')
                           AND c.run_at <= now()
                           AND (c.start_by IS NULL OR c.start_by > now()) THEN true
                          ELSE false END
               LIMIT q_left
               FOR UPDATE OF c SKIP LOCKED
            ), numbered AS (
              -- The round-robin position of each row. picked comes out in claim order (the index
              -- scan's), and if a plan ever numbered it otherwise only the lanes' contents would
              -- change, never how many lanes there are.
              SELECT p.id, p.bytes, (row_number() OVER () - 1)::integer AS n
                FROM (SELECT * FROM picked UNION ALL SELECT * FROM picked_fair) p
            ), claimed AS (
              UPDATE pgbus.job j
                 SET state = CASE WHEN p.bytes > v_limit THEN 'dead' ELSE 'running' END::job_state,
                     attempt = j.attempt + 1,
                     attempted_at = now(),
                     attempted_by = worker,
                     lease_expires_at = CASE WHEN p.bytes > v_limit THEN NULL ELSE now() + lease END,
                     lane = CASE WHEN v_lanes IS NULL OR p.bytes > v_limit THEN NULL
                                 ELSE txid_current() * 65536
                                      + (q_base + (q_taken + p.n) % q_lanes) % v_lanes END,
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
                FROM numbered p
               WHERE j.id = p.id
              RETURNING j.id, j.queue::text AS queue, j.priority::smallint AS priority, j.payload,
                        j.attempt, j.max_attempts::integer AS max_attempts, j.created_at, j.run_at,
                        j.trace_parent::text AS trace_parent, j.trace_state::text AS trace_state,
                        j.lane, j.attempt_base, j.run_as, j.linked,
                        p.bytes > v_limit AS oversized)
            SELECT c.id, c.queue, c.priority, c.payload, c.attempt, c.max_attempts, c.created_at,
                   c.run_at, c.trace_parent, c.trace_state, c.lane, c.attempt_base, c.run_as,
                   c.linked, coalesce(c.oversized, false) AS oversized
              FROM claimed c
             ORDER BY c.priority, c.run_at, c.id
          LOOP
            v_taken := v_taken + 1;
            q_taken := q_taken + 1;
            IF r.oversized THEN
              buried := buried + 1;
              IF r.linked THEN
                v_buried := v_buried || r.id;
              END IF;
            ELSE
              remaining := remaining - 1;
              q_left := q_left - 1;
              q_started := q_started + 1;
              job_id := r.id;
              job_queue := r.queue;
              job_priority := r.priority;
              job_payload := r.payload;
              job_attempt := r.attempt;
              job_max_attempts := r.max_attempts;
              job_created_at := r.created_at;
              job_run_at := r.run_at;
              job_trace_parent := r.trace_parent;
              job_trace_state := r.trace_state;
              job_lane := r.lane;
              job_attempt_base := r.attempt_base;
              job_run_as := r.run_as;
              job_linked := r.linked;
              RETURN NEXT;
            END IF;
          END LOOP;
          EXIT WHEN buried = 0 OR q_left <= 0;
        END LOOP;
        EXIT WHEN q_left <= 0;
      END LOOP;
      IF v_rate_left IS NOT NULL AND q_started > 0 THEN
        -- Under the row lock: count this claim's starts in its window.
        UPDATE pgbus.queue_limit l
           SET rate_count = CASE WHEN l.rate_window_start = b.window_start THEN l.rate_count
                                 ELSE 0 END + q_started,
               rate_window_start = b.window_start
         WHERE l.queue = q;
        IF q_started >= v_rate_left THEN
          PERFORM pgbus.notify(q, b.window_start + b.window_length);  -- the window is spent
        END IF;
      END IF;
    END LOOP;
    IF v_buried IS NOT NULL THEN
      PERFORM pgbus.job_finished(v_buried);
    END IF;
  END $$;

-- The claim of 0.1.0 and every build before pgbus.claim_jobs (issue #27): its signature and its
-- result, the rows of pgbus.job as they are now, stay for them (docs/schema.md, "The claim and its
-- contract"). It claims through pgbus.claim_jobs and then reads the claimed rows whole, in claim
-- order, one primary-key probe each: statements of their own, so they see this claim's updates
-- (one statement joining pgbus.claim_jobs to pgbus.job would read the rows as they were before
-- it), that PostgreSQL plans again when pgbus.job changes, and that need no sort and no
-- statistics (a join of the ids to pgbus.job could be a hash join over a never-analyzed table). A caller's own plan of SETOF pgbus.job may still
-- hold the old row type; that is why this build's engine calls pgbus.claim_jobs.
CREATE OR REPLACE FUNCTION pgbus.claim(
    queues   text[],
    max_jobs integer,
    worker   text,
    lease    interval,
    lanes    integer DEFAULT NULL,
    floor_queues     text[] DEFAULT NULL,
    floor_priorities integer[] DEFAULT NULL,
    floor_run_ats    timestamptz[] DEFAULT NULL)
  RETURNS SETOF pgbus.job
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET jit = off
  AS $$
  DECLARE
    v_id bigint;
  BEGIN
    FOREACH v_id IN ARRAY ARRAY(SELECT c.job_id
                                  FROM pgbus.claim_jobs(queues, max_jobs, worker, lease, lanes,
                                                        floor_queues, floor_priorities,
                                                        floor_run_ats) c) LOOP
      RETURN QUERY SELECT j.* FROM pgbus.job j WHERE j.id = v_id;
    END LOOP;
  END $$;

-- The budget of a queue that has a pgbus.queue_limit row (V14, V19, issue #16; docs/schema.md,
-- "Flow control" and "Rate limit"), for one claim: how many jobs the claim may take from it (take;
-- 0: skip the queue), over how many lanes (take_lanes), and whether this claim now holds the row
-- (locked: the claim then honours concurrency keys, with the row's key_* columns returned here for
-- pgbus.claim_keyed, and adds its starts to the rate window that begins at window_start, of which
-- rate_left starts remain; window_length is the row's rate_window). A row that is gone by the time
-- it is read leaves the queue unlimited. The caller passes what it may still take (remaining, of
-- max_jobs), its lanes and jobs per lane, and whether it already holds a limit row.
--
-- What a global limit counts: executions (pgbus.claim_executions, the distinct lanes among the
-- queue's running jobs; pgbus.claim, "Lanes"), not claimed rows. A grouped claim of 20 jobs for one
-- slot (jobs-per-transaction) costs one unit of the limit, as it should: counting rows made a limit
-- equal to the worker count collapse every group to one job per transaction (W1 at 0.08x). So a
-- limited queue may open at most global_concurrency - executions new lanes in this claim, and take
-- at most that many lanes' worth of jobs (max_jobs / lanes each, rounded up).
--
-- The concurrency argument. The executions are first counted without a lock; when the limit is
-- reached the queue is skipped, having locked nothing (a claim that loses takes no lock). Otherwise
-- the limit row is locked (FOR UPDATE), so the claims that may open lanes of one queue take turns,
-- each for the few milliseconds of its statement (a claim runs in autocommit), and counted again,
-- in a statement of its own and so with a fresh snapshot (READ COMMITTED, which is why this is
-- VOLATILE; a claim in any other isolation raises, since a snapshot taken before the lock would
-- miss the turn before it). The claim before it committed before it released the row, so its lanes
-- are in that count. A lane gains running jobs only in a claim, under the row lock; every other
-- change of a running job (complete, fail, snooze, cancel, rescue, release) only removes jobs from
-- lanes, and a count that missed one is too high, never too low. So the lanes never exceed the
-- limit. Per-key limits rest on the same lock (pgbus.claim_keyed).
--
-- No deadlock: a claim waits for a limit row only while it holds none. At a second limited queue
-- it takes the row FOR UPDATE SKIP LOCKED, and if another claim holds it, it skips the queue and
-- sends the queue's wake-up (delivered at its commit), so the capacity it could not look at is
-- claimed by the next round rather than at the next poll. Nothing else waits for a limit row
-- while holding a job row: pgbus.queue_limit_set and the enqueue of a keyed job (INSERT ... ON
-- CONFLICT DO NOTHING does not wait for a row lock) touch no job row first. A claim that finds
-- no capacity locks no job row; a limit row it held goes at its commit.
--
-- Rate limit: at most rate_limit starts (claimed jobs, each with attempted_at = this claim's now())
-- per window of rate_window, the windows laid end to end from the epoch. Read without a lock first
-- (a spent window skips the queue, locks nothing, and sends the queue's wake-up for the next
-- window's start, so the fleet's capsules sleep until then), then again under the row lock; the
-- claim adds its starts to rate_count under it. A row already in a later window than this claim's
-- now() lets it take nothing.
CREATE OR REPLACE FUNCTION pgbus.claim_budget(
    q text, remaining integer, max_jobs integer, lanes integer, per_lane integer, holding boolean,
    OUT locked boolean, OUT take integer, OUT take_lanes integer,
    OUT rate_left integer, OUT window_start timestamptz, OUT window_length interval,
    OUT key_concurrency integer, OUT key_fifo boolean, OUT key_fifo_skip_dead boolean)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    lim record;
    has_row boolean;
  BEGIN
    -- Twice: without a lock first, so that a queue at its limit is skipped with no lock taken; then
    -- under the row lock, counted again with that statement's fresh snapshot, for the answer.
    FOR pass IN 1..2 LOOP
      take := remaining;
      take_lanes := coalesce(lanes, 1);
      rate_left := NULL;
      IF pass = 1 THEN
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q;
        has_row := FOUND;
      ELSIF NOT holding THEN
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE;
        has_row := FOUND;
      ELSE
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE SKIP LOCKED;
        has_row := FOUND;
        IF NOT has_row AND EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = q) THEN
          PERFORM pgbus.notify(q, now());  -- another claim holds it: come back after its commit
          take := 0;
          RETURN;
        END IF;
      END IF;
      locked := has_row AND pass = 2;
      IF NOT has_row THEN
        RETURN;  -- no row, or it went: the queue is not limited now
      END IF;
      IF pass = 1 AND current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'pgbus: claiming from limited queue % needs READ COMMITTED, not %: run pgbus.claim in its own transaction',
          q, current_setting('transaction_isolation')
          USING ERRCODE = 'invalid_transaction_state';
      END IF;
      IF lim.global_concurrency IS NOT NULL THEN
        take_lanes := least(coalesce(lanes, max_jobs),
                            lim.global_concurrency - pgbus.claim_executions(q));
        IF take_lanes <= 0 THEN
          take := 0;
          RETURN;
        END IF;
        take := least(remaining, take_lanes * per_lane);
      END IF;
      IF lim.rate_limit IS NOT NULL THEN
        window_start := pgbus.rate_window_start(lim.rate_window);
        rate_left := pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count, window_start);
        IF rate_left <= 0 THEN
          -- Come back when the window allows: the fleet's capsules set an alarm for then.
          PERFORM pgbus.notify(q, CASE WHEN lim.rate_window_start > window_start THEN now()
                                      ELSE window_start + lim.rate_window END);
          take := 0;
          RETURN;
        END IF;
        take := least(take, rate_left);
      END IF;
    END LOOP;
    take_lanes := least(take_lanes, coalesce(lanes, 1));
    window_length := lim.rate_window;
    key_concurrency := lim.key_concurrency;
    key_fifo := lim.key_fifo;
    key_fifo_skip_dead := lim.key_fifo_skip_dead;
  END $$;

-- The queue's next priority level above after, for a claim given floors (issue #15, "a long
-- transaction elsewhere"; docs/schema.md, "Claim floors"): level, NULL when none is left, and the
-- floor to claim it from (level_floor, NULL: none). levels (ascending) and floors are the queue's
-- levels that have a floor and each one's run_at.
--
-- Why floors: a claimed job's entry in job_claim_idx stays until vacuum removes it, and while a
-- snapshot older than the claim is open anywhere in the database, vacuum may not: every claim then
-- steps over the entries of every job claimed since that snapshot, at the front of the level's
-- range, with a heap visit each (289 ms per claim after 10 minutes at 1,000 jobs/s). A floor is a
-- caller's lower bound on run_at for a level: the level is probed and claimed from (queue,
-- priority, floor) onward, an index range that starts after those entries. A level without a
-- floor is probed as pgbus.claim probes, but only up to the next level that has one, which is
-- probed from its floor; a level found empty from its floor is passed. A job of the level with an
-- older run_at is not seen by such a claim. The engine passes floors only while its claims are
-- slow, derives them from the jobs it claimed (the earliest run_at claimed at the level, less a
-- grace), and runs a claim without floors every few seconds, which takes any job a floor hid: one
-- enqueued by a transaction that committed long after it began, one enqueued with a run_at in the
-- past, one handed back with its old run_at (ClaimFloors.java). Strict queue and priority order
-- hold between the jobs a claim can see. STABLE: it only reads, with its caller's snapshot.
CREATE OR REPLACE FUNCTION pgbus.claim_next_level(
    q text, after smallint, levels integer[], floors timestamptz[],
    OUT level smallint, OUT level_floor timestamptz)
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET enable_sort = off
  SET jit = off
  AS $$
  DECLARE
    i integer := 1;
    next_floored integer;  -- the next level above after that has a floor, or 32767 when none has
  BEGIN
    LOOP
      WHILE i <= cardinality(levels) AND levels[i] <= after LOOP
        i := i + 1;
      END LOOP;
      next_floored := coalesce(levels[i], 32767);
      SELECT c.priority INTO level
        FROM pgbus.job c
       WHERE c.queue = q
         AND c.state IN ('available', 'scheduled', 'retryable')
         AND c.priority > after
         AND c.priority < next_floored
       ORDER BY c.priority
       LIMIT 1;
      IF FOUND OR next_floored = 32767 THEN
        RETURN;
      END IF;
      after := next_floored;
      PERFORM 1
         FROM pgbus.job c
        WHERE c.queue = q
          AND c.state IN ('available', 'scheduled', 'retryable')
          AND c.priority = next_floored
          AND c.run_at >= floors[i]
        ORDER BY c.priority, c.run_at, c.id
        LIMIT 1;
      IF FOUND THEN
        level := next_floored;
        level_floor := floors[i];
        RETURN;
      END IF;
    END LOOP;
  END $$;

-- Which due jobs of priority level prio a keyed claim may take from queue q (V14, V19, issue #16;
-- docs/schema.md, "Flow control"): at most take ids, in claim order, that keep every concurrency
-- key within its limit; NULL when the level's first take candidates carry no key (most limited
-- queues have none, and the claim then takes the level's unkeyed jobs as they come). A queue whose
-- limit row has a global limit only still honours keys: a keyed job's key is a mutex wherever it
-- is enqueued (key_limit NULL: 1). The caller holds the queue's limit row (pgbus.claim_budget), and
-- that lock orders these claims, so no two take jobs of one key at once; this statement's snapshot
-- is taken after the lock, so it sees the jobs the claim before it took.
--
-- Per-key limit: a key's running jobs (through job_key_running_idx) plus the candidates of the key
-- before this one in claim order (row_number per key) stay within key_limit. A lane's jobs of one
-- key would run one after another, so counting rows is safe.
--
-- FIFO per key (V19, fifo): a keyed candidate is taken only when no job of its key runs and no
-- older job of its key (lower id: enqueue order) waits in any state a claim could take later
-- (available, scheduled, retryable, whether due or not, in any priority level) or, unless
-- fifo_skip_dead, lies dead: so a retry keeps its place and the key waits for it, and a dead job
-- holds the key until a replay, a cancel or the prune. One probe of job_key_waiting_idx per
-- candidate. Jobs of one key enqueued by concurrent transactions are ordered by id among those
-- committed when a claim looks: an id that commits after a later one has started runs after it.
--
-- The window: the level's due jobs are read in claim order, a window of them at a time (first 4 x
-- take + 32); those whose key is at its limit are dropped and the first take of the rest are
-- returned. When that leaves the claim short and the window was full, the window widens fourfold,
-- up to 10,000 jobs: a key with thousands of waiting jobs at the head of the queue delays the others
-- by at most that scan, and one further than 10,000 jobs deep waits until the head drains.
CREATE OR REPLACE FUNCTION pgbus.claim_keyed(
    q text, prio smallint, take integer,
    key_limit integer, fifo boolean, fifo_skip_dead boolean)
  RETURNS bigint[]
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET enable_sort = off
  SET jit = off
  AS $$
  DECLARE
    v_window integer := take * 4 + 32;
    v_seen integer;
    v_ids bigint[];
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM (
                     SELECT c.concurrency_key
                       FROM pgbus.job c
                      WHERE c.queue = q
                        AND c.priority = prio
                        AND c.state IN ('available', 'scheduled', 'retryable')
                        AND c.run_at <= now()
                      ORDER BY c.priority, c.run_at, c.id
                      LIMIT take) h
                    WHERE h.concurrency_key IS NOT NULL) THEN
      RETURN NULL;
    END IF;
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
            OR (NOT fifo
                AND k.n + coalesce(b.n, 0) <= coalesce(key_limit, 1))
            -- FIFO: the key's head only, and only while none of its jobs runs. An older
            -- job of the key that waits (due or not: a retry keeps its place) or lies
            -- dead (unless skipped) holds it back, in any priority level.
            OR (fifo AND b.n IS NULL
                AND NOT EXISTS (
                      SELECT 1 FROM pgbus.job o
                       WHERE o.queue = q
                         AND o.concurrency_key = k.concurrency_key
                         AND o.id < k.id
                         AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                         AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
         ORDER BY k.run_at, k.id
         LIMIT take
      )
      SELECT (SELECT count(*) FROM win),
             coalesce((SELECT array_agg(o.id ORDER BY o.run_at, o.id) FROM ok o), '{}')
        INTO v_seen, v_ids;
      EXIT WHEN cardinality(v_ids) >= take OR v_seen < v_window OR v_window >= 10000;
      v_window := least(v_window * 4, 10000);
    END LOOP;
    RETURN v_ids;
  END $$;

-- The tenants of fair queue q that have waiting jobs, in key order, at most at_most of them (NULL:
-- all): a skip scan of job_fair_idx, one probe per tenant, whatever one tenant's backlog.
CREATE OR REPLACE FUNCTION pgbus.claim_fair_tenants(q text, at_most integer)
  RETURNS SETOF text
  LANGUAGE plpgsql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET jit = off
  SET plan_cache_mode = force_generic_plan
  SET enable_seqscan = off
  AS $$
  BEGIN
    RETURN QUERY
      WITH RECURSIVE tenants(k, n) AS (
        (SELECT c.concurrency_key::text, 1
           FROM pgbus.job c
          WHERE c.queue = q AND c.concurrency_key IS NOT NULL
            AND c.state IN ('available', 'scheduled', 'retryable')
          ORDER BY c.concurrency_key
          LIMIT 1)
        UNION ALL
        SELECT (SELECT c.concurrency_key::text
                  FROM pgbus.job c
                 WHERE c.queue = q AND c.concurrency_key > t.k
                   AND c.state IN ('available', 'scheduled', 'retryable')
                 ORDER BY c.concurrency_key
                 LIMIT 1), t.n + 1
          FROM tenants t
         WHERE t.k IS NOT NULL AND (at_most IS NULL OR t.n < at_most)
      )
      SELECT t.k FROM tenants t WHERE t.k IS NOT NULL;
  END $$;

-- Which due jobs of priority level prio a fair queue may take (issue #30, V50; docs/schema.md,
-- "Fair share"): at most take ids, dealt over the queue's tenants (its jobs' concurrency keys)
-- round-robin, weighted by the limit row's fair_weights, instead of oldest first. Called instead
-- of pgbus.claim_keyed, under the same lock of the queue's limit row (pgbus.claim_budget), which
-- orders these claims: so the passes below are read and written by one claim at a time, and the
-- per-key limit and FIFO hold as pgbus.claim_keyed holds them.
--
-- Weighted round-robin as stride scheduling. Each tenant has a pass (pgbus.queue_fair_pass): the
-- virtual time up to which it has been served. Its n-th candidate of this claim finishes at
-- pass + n / weight, and the take candidates that finish first are dealt, ties in claim order
-- (run_at, id). A tenant's pass then moves to its last dealt candidate's. The queue's fair_clock
-- is the earliest pass any claim dealt from, and a tenant without a row, or with one below the
-- clock, is read at the clock: a tenant that arrives, or comes back after a pause, joins level
-- with the tenants that have been served and neither jumps ahead with credit it saved nor waits
-- behind another's backlog. With one tenant A served for a while, the clock trails A's pass by
-- one claim's share, so a new tenant B's first job finishes a share earlier than A's next one and
-- the next claim deals it first (equal weights; with A at weight w, after at most w of A's).
--
-- The plan: a skip-scan over job_fair_idx (queue, concurrency_key, priority, run_at, id): the
-- recursive CTE finds the next key above the last one by one probe, then each tenant's due jobs
-- of the level are one range of the same index (LATERAL ... LIMIT). Planner trap: the obvious
-- shapes read the whole backlog. SELECT DISTINCT concurrency_key (or GROUP BY) has no skip scan
-- before PostgreSQL 18 and reads every waiting entry of the queue (100,000 for one busy tenant);
-- a join of the tenants to pgbus.job without LATERAL ... LIMIT lets the planner, which guesses a
-- recursive CTE's size, choose a hash join over the queue's whole range; and a per-tenant probe
-- that job_claim_idx (queue, priority, run_at, id) could serve with a filter on the key would walk
-- the other tenants' jobs ahead of it. Each statement here names a key range or a key equality
-- that only job_fair_idx has as an index bound, so no statistics make another index cheaper. The
-- cost is per tenant with a waiting job (a probe to find it, one for its running count, one for its
-- pass, one for its range), not per waiting job: a tenant's backlog of 100,000 costs what one does.
-- Each tenant's range is read only up to its quota (the candidates that can finish by the take-th
-- finish), so a claim reads about take job rows. A tenant with fewer due jobs than its quota (a new
-- one with a single job) leaves the pass short; a second pass, from the passes the first wrote,
-- deals the rest with each tenant's candidates read up to its room. One statement per pass: the
-- passes, the clock and the pruning are data-modifying parts of it (each statement costs a call).
--
-- A job without a concurrency key in a fair queue has no tenant: it is dealt only when the
-- tenants leave room in the claim, from the level's first take jobs in claim order.
CREATE OR REPLACE FUNCTION pgbus.claim_fair(
    q text, prio smallint, take integer,
    key_limit integer, fifo boolean, fifo_skip_dead boolean)
  RETURNS bigint[]
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  SET jit = off
  -- Planned once per session: with custom plans PostgreSQL planned the statement below at every
  -- call (its generic cost never looked cheaper), about 3 ms of a 4 ms call. Its shape fixes the
  -- plan (LATERAL ... LIMIT, key equalities only job_fair_idx serves), so no value needs seeing;
  -- FairShareTest checks the plan on a cold table.
  SET plan_cache_mode = force_generic_plan
  -- And no sequential scan: the generic plan of the FIFO probe below (a subplan that runs only
  -- under key_fifo) was once a Seq Scan of pgbus.job on a table never analyzed, which would read
  -- the whole table per candidate. Every table here has the index each statement needs.
  SET enable_seqscan = off
  AS $$
  DECLARE
    v_weights jsonb;
    v_clock double precision;
    v_ids bigint[] := '{}';
    v_keys text[] := '{}';     -- the key of each id dealt so far
    v_more bigint[];
    v_more_keys text[];
    v_exact boolean := false;  -- second pass: every tenant's candidates up to its room
  BEGIN
    -- The common case without reading every tenant: equal weights, and at least `take` tenants
    -- at the clock (no pass ahead of it) whose first due job is among the level's next 8 x take
    -- jobs in claim order. Each of those tenants' first candidate finishes at clock + 1, before
    -- any other candidate (a tenant ahead of the clock finishes later, and a second job of a
    -- tenant at clock + 2), so the statement below would deal exactly these: the `take` oldest
    -- such first jobs, one per tenant, and write the same passes. It reads about a claim's worth
    -- of rows where the statement below probes every tenant with waiting jobs (150 ms a claim at
    -- 10,000 tenants, docs/performance.md); when it finds fewer, that statement decides.
    SELECT l.fair_weights, l.fair_clock INTO v_weights, v_clock
      FROM pgbus.queue_limit l WHERE l.queue = q;
    IF take > 0 AND (v_weights IS NULL OR v_weights = '{}'::jsonb)
       -- More tenants wait than the claim takes (take + 1 probes of the skip scan below): with
       -- fewer, the tenants are all ahead of the clock after every other claim, and the walk
       -- would only add its reads to that statement's (+14% a claim at 10 tenants).
       AND (SELECT count(*) FROM pgbus.claim_fair_tenants(q, take + 1)) > take THEN
      WITH walk AS MATERIALIZED (
        SELECT c.id, c.run_at, c.concurrency_key::text AS k, c.start_by
          FROM pgbus.job c
         WHERE c.queue = q
           AND c.priority = prio
           AND c.state IN ('available', 'scheduled', 'retryable')
           AND c.run_at <= now()
         ORDER BY c.priority, c.run_at, c.id
         LIMIT take * 8
      ), heads AS MATERIALIZED (
        -- Each tenant's first job in its range as the statement below reads it (a prefix of the
        -- level in the same order holds it), and that statement's FIFO test of it.
        SELECT DISTINCT ON (w.k) w.k, w.id, w.run_at
          FROM walk w
         WHERE w.k IS NOT NULL
           AND (w.start_by IS NULL OR w.start_by > now())
         ORDER BY w.k, w.run_at, w.id
      ), at_clock AS MATERIALIZED (
        SELECT h.k, h.id, h.run_at
          FROM heads h
         WHERE NOT EXISTS (SELECT 1 FROM pgbus.queue_fair_pass p
                            WHERE p.queue = q AND p.tenant = h.k AND p.pass > v_clock)
           AND (NOT fifo OR NOT EXISTS (
                 SELECT 1 FROM pgbus.job o
                  WHERE o.queue = q
                    AND o.concurrency_key = h.k
                    AND o.id < h.id
                    AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                    AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
      ), dealt AS MATERIALIZED (
        SELECT a.k, a.id, a.run_at
          FROM at_clock a
         WHERE (SELECT count(*)
                  FROM (SELECT 1 FROM pgbus.job x
                         WHERE x.queue = q AND x.concurrency_key = a.k AND x.state = 'running'
                         LIMIT CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END) r)
               < CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END
         ORDER BY a.run_at, a.id
         LIMIT take
      )
      SELECT coalesce(array_agg(d.id ORDER BY d.run_at, d.id), '{}'),
             coalesce(array_agg(d.k ORDER BY d.run_at, d.id), '{}')
        INTO v_more, v_more_keys
        FROM dealt d;
      IF cardinality(v_more) = take THEN
        -- What the statement below writes for such a deal: each tenant's pass at clock + 1, the
        -- clock where it is (the deal started there), the rows at or below it gone.
        INSERT INTO pgbus.queue_fair_pass AS p (queue, tenant, pass)
        SELECT q, k.k, v_clock + 1 FROM unnest(v_more_keys) AS k(k)
        ON CONFLICT (queue, tenant) DO UPDATE SET pass = excluded.pass;
        DELETE FROM pgbus.queue_fair_pass p
         WHERE p.queue = q AND p.pass <= v_clock AND p.tenant <> ALL (v_more_keys);
        RETURN v_more;
      END IF;
    END IF;
    LOOP
    SELECT l.fair_weights, l.fair_clock INTO v_weights, v_clock
      FROM pgbus.queue_limit l WHERE l.queue = q;
    WITH tenants(k) AS MATERIALIZED (
      SELECT f.k FROM pgbus.claim_fair_tenants(q, NULL) AS f(k)
    ), shares AS (
      SELECT t.k,
             coalesce((v_weights ->> t.k)::double precision, 1) AS w,
             greatest(coalesce(p.pass, v_clock), v_clock) AS pass,
             CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END
               - (SELECT count(*) FROM pgbus.job x
                   WHERE x.queue = q AND x.concurrency_key = t.k AND x.state = 'running')
               - (SELECT count(*) FROM unnest(v_keys) AS z(k) WHERE z.k = t.k) AS room
        FROM tenants t
        LEFT JOIN pgbus.queue_fair_pass p ON p.queue = q AND p.tenant = t.k
       WHERE t.k IS NOT NULL
    ), cut AS (
      -- The take-th earliest finish among every tenant's possible candidates: arithmetic on the
      -- shares, no row read. A tenant needs candidates only up to it (its quota below), so a
      -- claim reads about take rows of pgbus.job however many tenants it deals over.
      SELECT max(x.finish) AS finish
        FROM (SELECT s.pass + g.n / s.w AS finish
                FROM shares s
                CROSS JOIN LATERAL generate_series(1, greatest(least(take, s.room), 0)) AS g(n)
               ORDER BY 1
               LIMIT take - cardinality(v_ids)) x
    ), quotas AS (
      SELECT s.k, s.w, s.pass, s.room,
             CASE WHEN v_exact THEN least(take, s.room)
                  ELSE least(take, s.room, floor((x.finish - s.pass) * s.w + 1e-9)::bigint)
             END AS quota
        FROM shares s, cut x
    ), cand AS (
      SELECT s.k, s.pass, j.id, j.run_at, s.pass + j.n / s.w AS finish
        FROM quotas s
        CROSS JOIN LATERAL (
          SELECT c.id, c.run_at, row_number() OVER (ORDER BY c.run_at, c.id) AS n
            FROM pgbus.job c
           WHERE c.queue = q
             AND c.concurrency_key = s.k
             AND c.priority = prio
             AND c.state IN ('available', 'scheduled', 'retryable')
             AND c.run_at <= now()
             AND (c.start_by IS NULL OR c.start_by > now())
             AND c.id <> ALL (v_ids)
           ORDER BY c.priority, c.run_at, c.id
           LIMIT greatest(s.quota, 0)) j
       WHERE s.quota > 0
         -- FIFO: the key's head only, as pgbus.claim_keyed decides.
         AND (NOT fifo OR NOT EXISTS (
               SELECT 1 FROM pgbus.job o
                WHERE o.queue = q
                  AND o.concurrency_key = s.k
                  AND o.id < j.id
                  AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                  AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
    ), dealt AS (
      SELECT d.k, d.pass, d.id, d.run_at, d.finish
        FROM cand d
       ORDER BY d.finish, d.run_at, d.id
       LIMIT take - cardinality(v_ids)
    ), served AS (
      INSERT INTO pgbus.queue_fair_pass AS p (queue, tenant, pass)
      SELECT q, d.k, max(d.finish) FROM dealt d GROUP BY d.k
      ON CONFLICT (queue, tenant) DO UPDATE SET pass = excluded.pass
    ), start AS (
      SELECT min(d.pass) AS pass FROM dealt d
    ), clocked AS (
      UPDATE pgbus.queue_limit l SET fair_clock = x.pass
        FROM start x
       WHERE l.queue = q AND x.pass > l.fair_clock
    ), pruned AS (
      -- Rows at or below the new clock say nothing any more. Not the tenants just served: their
      -- rows are the upsert's (one statement may not change a row twice), and above it.
      DELETE FROM pgbus.queue_fair_pass p
       USING start x
       WHERE p.queue = q AND p.pass <= x.pass
         AND p.tenant <> ALL (ARRAY(SELECT d.k FROM dealt d))
    )
    SELECT coalesce(array_agg(d.id ORDER BY d.finish, d.run_at, d.id), '{}'),
           coalesce(array_agg(d.k ORDER BY d.finish, d.run_at, d.id), '{}')
      INTO v_more, v_more_keys
      FROM dealt d;
    v_ids := v_ids || v_more;
    v_keys := v_keys || v_more_keys;
    -- Short by the quotas: a tenant had fewer due jobs than its quota. Once more, from the passes
    -- just written, with every tenant's candidates up to its room.
    EXIT WHEN v_exact OR cardinality(v_ids) >= take;
    v_exact := true;
    END LOOP;
    IF cardinality(v_ids) < take THEN
      v_ids := v_ids || ARRAY(
        SELECT h.id
          FROM (SELECT c.id, c.concurrency_key
                  FROM pgbus.job c
                 WHERE c.queue = q
                   AND c.priority = prio
                   AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                 ORDER BY c.priority, c.run_at, c.id
                 LIMIT take) h
         WHERE h.concurrency_key IS NULL
         LIMIT take - cardinality(v_ids));
    END IF;
    RETURN v_ids;
  END $$;

-- The executions of a queue now: the distinct lanes among its running jobs, a job without a lane
-- counting as one of its own (pgbus.claim, "Lanes"). Read through
-- job_queue_state_idx (queue, state, id).
CREATE OR REPLACE FUNCTION pgbus.claim_executions(q text) RETURNS integer
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
    SELECT (count(DISTINCT x.lane) + count(*) FILTER (WHERE x.lane IS NULL))::integer
      FROM pgbus.job x
     WHERE x.queue = q AND x.state = 'running'
  $$;

-- The start of the rate window that now() falls in: windows of rate_window laid end to end from
-- the epoch, so every claim of the fleet agrees on them (pgbus.claim_budget, "Rate limit").
CREATE OR REPLACE FUNCTION pgbus.rate_window_start(rate_window interval) RETURNS timestamptz
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
    SELECT to_timestamp(floor(extract(epoch FROM now()) / extract(epoch FROM rate_window))
                        * extract(epoch FROM rate_window))
  $$;

-- How many starts the window beginning at wstart still allows, given the limit row's window and
-- count. A row already in a later window than wstart (a claim whose transaction began before the
-- claim that moved it) allows none: this claim's starts would land in a window that is closed.
CREATE OR REPLACE FUNCTION pgbus.rate_left(
    rate_limit integer, row_window_start timestamptz, row_count integer, wstart timestamptz)
  RETURNS integer
  LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
    SELECT CASE WHEN row_window_start > wstart THEN 0
                WHEN row_window_start = wstart THEN rate_limit - row_count
                ELSE rate_limit END
  $$;

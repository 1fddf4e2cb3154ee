-- Repeatable migration: the per-minute history of each queue (issue #29; tables in V31). See
-- docs/schema.md, "History".
--
-- Off every job path: only the maintenance leader calls it (Maintainer's RollupTask, through
-- HistoryStore), so it pins its search_path.

-- Writes the minutes after pgbus.queue_minute_mark.rolled_to that ended at least grace ago, one row
-- per queue and minute with a finished job or a failed attempt, moves the mark on, and deletes the
-- minutes older than keep. Returns the rows written plus the rows deleted (0: nothing to do).
--
-- Written once: the mark's row lock orders two leaders (an old one that has not yet noticed it
-- lost the lease, and the new one); the second sees the mark moved and writes nothing, and the
-- primary key refuses a second row for a minute whatever happens. grace covers a finishing
-- statement whose transaction commits a little after the time it stamped (JobStore stamps
-- finalized_at with statement_timestamp()). After a gap (no leader, or every JVM stopped) the next
-- call writes every minute since the mark, at most keep back.
--
-- What it counts for a minute: completed and dead from finalized_at; failed attempts from the
-- 'at' of the errors the jobs carry (JobStore's ERRORS_PREPENDED), looked up among the jobs that
-- can carry an error stamped since the mark: finished since then (finalized_at), running an
-- attempt started since then (attempted_at; a retry starts after the failure), or retryable and
-- due since then (run_at: the failure's time plus its backoff). A job keeps its newest errors
-- only (pgbus.errors-kept), so a job that failed more often than that within one rollup's span
-- counts the ones it kept. The timings are those of the jobs that completed or died in the
-- minute (their last attempt), as percentile_disc: values that occurred, no interpolation.
CREATE OR REPLACE FUNCTION pgbus.queue_history_rollup(grace interval, keep interval)
  RETURNS integer
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pgbus, pg_temp
  -- Its plan costs past jit_above_cost on a large live table: JIT then compiled for 40-70 ms of a
  -- statement that runs in a few (as the admin searches, docs/performance.md "Admin queries").
  SET jit = off
AS $$
DECLARE
  v_from    timestamptz;
  v_to      timestamptz;
  v_written integer := 0;
  v_pruned  integer := 0;
BEGIN
  -- The bounds of HistoryStore.GRACE and MaintainerConfig.HISTORY_RETENTION.
  IF grace IS NULL OR grace < interval '0' OR grace > interval '10 minutes' THEN
    RAISE EXCEPTION 'pgbus: invalid grace %: use 0 to 10 minutes', grace
      USING ERRCODE = '22023';
  END IF;
  IF keep IS NULL OR keep < interval '1 hour' OR keep > interval '31 days' THEN
    RAISE EXCEPTION 'pgbus: invalid history retention %: use 1 hour to 31 days (pgbus.history.retention)', keep
      USING ERRCODE = '22023';
  END IF;

  SELECT m.rolled_to INTO v_from FROM pgbus.queue_minute_mark m FOR UPDATE;
  IF NOT FOUND THEN
    -- Someone deleted the mark: history starts again now.
    INSERT INTO pgbus.queue_minute_mark (rolled_to)
    VALUES (date_trunc('minute', now() - grace)) ON CONFLICT DO NOTHING;
    RETURN 0;
  END IF;
  v_from := greatest(v_from, date_trunc('minute', now() - keep));
  v_to := date_trunc('minute', now() - grace);

  IF v_to > v_from THEN
    -- Each arm of the failures is its own index range (job_finalized_queue_idx, job_lease_idx,
    -- job_queue_state_idx per queue for the retryable jobs), not one OR over the table. Planner
    -- trap: the finished jobs' arm names completed and dead, and cancelled apart. All three are the partial index's whole predicate,
    -- so the planner would drop the state condition as implied, leaving finalized_at, the
    -- index's second column, to a scan of the whole index (or a seq scan of the table).
    WITH RECURSIVE queues(queue) AS (
      SELECT min(j.queue) FROM pgbus.job j
      UNION ALL
      SELECT (SELECT min(j.queue) FROM pgbus.job j WHERE j.queue > q.queue)
        FROM queues q WHERE q.queue IS NOT NULL
    ), finished AS (
      SELECT j.queue::text AS queue, date_trunc('minute', j.finalized_at) AS minute, j.state,
             greatest(0, extract(epoch FROM j.attempted_at - j.run_at) * 1000)::bigint AS wait_ms,
             greatest(0, extract(epoch FROM j.finalized_at - j.attempted_at) * 1000)::bigint AS run_ms
        FROM pgbus.job j
       WHERE j.state = ANY ('{completed,dead}'::pgbus.job_state[])
         AND j.finalized_at >= v_from AND j.finalized_at < v_to
      UNION ALL
      -- V33: completed jobs move to pgbus.job_history a minute after they end, before a rollup
      -- after a quiet spell reads them (job_history_finalized_brin, V60, per day's partition).
      SELECT h.queue::text, date_trunc('minute', h.finalized_at), h.state,
             greatest(0, extract(epoch FROM h.attempted_at - h.run_at) * 1000)::bigint,
             greatest(0, extract(epoch FROM h.finalized_at - h.attempted_at) * 1000)::bigint
        FROM pgbus.job_history h
       WHERE h.state = 'completed' AND h.finalized_at >= v_from AND h.finalized_at < v_to
    ), per_minute AS (
      SELECT f.queue, f.minute,
             count(*) FILTER (WHERE f.state = 'completed') AS completed,
             count(*) FILTER (WHERE f.state = 'dead') AS dead,
             percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.wait_ms) AS wait,
             percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.run_ms) AS run
        FROM finished f
       GROUP BY 1, 2
    ), erring AS (
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = ANY ('{completed,dead}'::pgbus.job_state[])
         AND j.finalized_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = 'cancelled' AND j.finalized_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      SELECT h.queue, h.errors FROM pgbus.job_history h
       WHERE h.finalized_at >= v_from AND h.errors <> '[]'::jsonb
      UNION ALL
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = 'running' AND j.attempted_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      -- Retryable jobs, one range of job_queue_state_idx (queue, state) per queue: the queues are
      -- found by a skip scan of that index (one probe each), and OFFSET 0 keeps the lateral range
      -- from being flattened into a join, which reads the whole index or the table for a state
      -- that is its second column (40 ms at 2M waiting jobs, 230 ms as a parallel seq scan; this
      -- shape 2.6 ms for 8 queues and 2,000 retryable jobs).
      SELECT r.queue, r.errors
        FROM queues q
       CROSS JOIN LATERAL (
             SELECT j.queue, j.errors FROM pgbus.job j
              WHERE j.queue = q.queue AND j.state = 'retryable' AND j.run_at >= v_from
             OFFSET 0) r
    ), failures AS (
      SELECT e.queue::text AS queue, date_trunc('minute', x.at) AS minute, count(*) AS failed
        FROM erring e
       CROSS JOIN LATERAL jsonb_array_elements(e.errors) AS a(entry)
       CROSS JOIN LATERAL (SELECT (a.entry ->> 'at')::timestamptz AS at) x
       WHERE x.at >= v_from AND x.at < v_to
       GROUP BY 1, 2
    )
    INSERT INTO pgbus.queue_minute AS h
      (queue, minute, completed, failed, dead,
       wait_p50_ms, wait_p95_ms, wait_p99_ms, run_p50_ms, run_p95_ms, run_p99_ms)
    SELECT coalesce(p.queue, f.queue), coalesce(p.minute, f.minute),
           coalesce(p.completed, 0), coalesce(f.failed, 0), coalesce(p.dead, 0),
           p.wait[1], p.wait[2], p.wait[3], p.run[1], p.run[2], p.run[3]
      FROM per_minute p
      FULL JOIN failures f ON f.queue = p.queue AND f.minute = p.minute
    ON CONFLICT (queue, minute) DO NOTHING;
    GET DIAGNOSTICS v_written = ROW_COUNT;

    UPDATE pgbus.queue_minute_mark SET rolled_to = v_to;
  END IF;

  DELETE FROM pgbus.queue_minute h WHERE h.minute < now() - keep;
  GET DIAGNOSTICS v_pruned = ROW_COUNT;
  RETURN v_written + v_pruned;
END;
$$;

-- V47: the finished jobs of pgbus.job_history counted per (partition, queue, state) in
-- pgbus.job_history_count, which the admin API's counts read (JobAdminStore.COUNTS) instead of
-- every history row. docs/schema.md, V47.
--
-- Kept by statement triggers on pgbus.job_history rather than by the archive's Java code, so that
-- every writer keeps them: this release's move, the previous release's (a rolling upgrade runs
-- both), an operator's delete, the reencryption's UPDATE, a manual DELETE in psql. One statement
-- of the trigger per writing statement, whatever its row count (the move's batch of 1,000 rows
-- adds one grouped upsert). Each delta is written in the writer's transaction: any snapshot sees
-- the rows and their counts together.
--
-- The partition of a row is found by its day's name (ArchiveStore names every day partition
-- job_history_pYYYYMMDD for [day, day + 1) UTC), one lookup per group, not per row. A day without
-- one routes to the default partition, which is not counted here: it is empty unless rows were
-- written by hand, the previous release prunes it without passing through pgbus.job_history, and
-- the readers count it directly (an index range of an empty partition). The keys are upserted in order, so that two
-- writers of the same keys wait for each other instead of deadlocking.
CREATE OR REPLACE FUNCTION pgbus.job_history_part(day date)
  RETURNS oid
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
AS $$
  SELECT pg_catalog.to_regclass('pgbus.job_history_p' || pg_catalog.to_char(day, 'YYYYMMDD'))::oid
$$;

-- Each branch reads only the transition tables its trigger has (an INSERT trigger has no old rows).
CREATE OR REPLACE FUNCTION pgbus.job_history_count_delta()
  RETURNS trigger
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pgbus, pg_temp
AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    -- Every partition is empty now; they stay counted (at zero).
    DELETE FROM pgbus.job_history_count;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, d.jobs
      FROM (SELECT (n.finalized_at AT TIME ZONE 'UTC')::date AS day, n.queue::text AS queue,
                   n.state, count(*) AS jobs
              FROM job_history_new n GROUP BY 1, 2, 3) d
     WHERE pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, -d.jobs
      FROM (SELECT (o.finalized_at AT TIME ZONE 'UTC')::date AS day, o.queue::text AS queue,
                   o.state, count(*) AS jobs
              FROM job_history_old o GROUP BY 1, 2, 3) d
     WHERE pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  ELSE
    -- An UPDATE (the reencryption's) rarely changes what is counted: only the keys whose count
    -- moved are written.
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, d.jobs
      FROM (SELECT coalesce(a.day, r.day) AS day, coalesce(a.queue, r.queue) AS queue,
                   coalesce(a.state, r.state) AS state,
                   coalesce(a.jobs, 0) - coalesce(r.jobs, 0) AS jobs
              FROM (SELECT (n.finalized_at AT TIME ZONE 'UTC')::date AS day, n.queue::text AS queue,
                           n.state, count(*) AS jobs
                      FROM job_history_new n GROUP BY 1, 2, 3) a
              FULL JOIN (SELECT (o.finalized_at AT TIME ZONE 'UTC')::date AS day,
                                o.queue::text AS queue, o.state, count(*) AS jobs
                           FROM job_history_old o GROUP BY 1, 2, 3) r
                ON r.day = a.day AND r.queue = a.queue AND r.state = a.state) d
     WHERE d.jobs <> 0 AND pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  END IF;
  RETURN NULL;
END;
$$;

-- The counts of partitions that are gone (dropped by any release): rows no reader counts any more
-- (they join pg_inherits), deleted so the table stays small. The leader calls it after a drop and
-- with every recount.
CREATE OR REPLACE FUNCTION pgbus.job_history_count_prune()
  RETURNS integer
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pgbus, pg_temp
AS $$
DECLARE
  v_gone integer;
BEGIN
  DELETE FROM pgbus.job_history_count c
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                      WHERE i.inhrelid = c.part
                        AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass);
  GET DIAGNOSTICS v_gone = ROW_COUNT;
  DELETE FROM pgbus.job_history_counted c
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                      WHERE i.inhrelid = c.part
                        AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass);
  RETURN v_gone;
END;
$$;

-- Counts one partition from its rows and marks it counted: the backfill of the partitions that
-- existed before V47 and of every partition the leader finds uncounted (one the previous release
-- created, or this one an instant ago). Under a SHARE lock of that partition, so that no write
-- lands between the count and the mark (a move into it waits; readers do not); the caller sets a
-- lock_timeout. Its cost is one pass over the partition (docs/performance.md).
CREATE OR REPLACE FUNCTION pgbus.job_history_recount(day_partition regclass)
  RETURNS bigint
  LANGUAGE plpgsql
  SET search_path = pg_catalog, pgbus, pg_temp
AS $$
DECLARE
  v_jobs bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                  WHERE i.inhrelid = day_partition
                    AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass) THEN
    RAISE EXCEPTION 'pgbus: % is not a partition of pgbus.job_history: pass one of its partitions',
      (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.oid = day_partition)
      USING ERRCODE = '22023';
  END IF;
  -- Without the triggers a count would go stale at the next write: never mark it.
  IF (SELECT count(*) FROM pg_catalog.pg_trigger t
       WHERE t.tgrelid = 'pgbus.job_history'::pg_catalog.regclass
         AND t.tgname IN ('job_history_count_insert', 'job_history_count_delete',
                          'job_history_count_update', 'job_history_count_truncate')) <> 4 THEN
    RAISE EXCEPTION 'pgbus: the count triggers of pgbus.job_history are missing: create them again as V47__history_counts.sql does'
      USING ERRCODE = '55000';
  END IF;
  EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE MODE', day_partition);
  DELETE FROM pgbus.job_history_count c WHERE c.part = day_partition::oid;
  EXECUTE pg_catalog.format(
    'INSERT INTO pgbus.job_history_count (part, queue, state, jobs)'
    ' SELECT $1, h.queue::text, h.state, count(*) FROM %s h GROUP BY 2, 3', day_partition)
    USING day_partition::oid;
  SELECT coalesce(sum(c.jobs), 0) INTO v_jobs FROM pgbus.job_history_count c
   WHERE c.part = day_partition::oid;
  INSERT INTO pgbus.job_history_counted (part) VALUES (day_partition::oid)
  ON CONFLICT (part) DO UPDATE SET counted_at = now();
  PERFORM pgbus.job_history_count_prune();
  RETURN v_jobs;
END;
$$;

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
    -- job_claim_idx's run_at, read whole since V40 dropped job_due_idx: about 60 ms a minute at a
    -- million live jobs), not one OR over the table. Planner trap: the finished jobs' arm names
    -- completed and dead, and cancelled apart. All three are the partial index's whole predicate,
    -- so the planner would drop the state condition as implied, leaving finalized_at, the
    -- index's second column, to a scan of the whole index (or a seq scan of the table).
    WITH finished AS (
      SELECT j.queue::text AS queue, date_trunc('minute', j.finalized_at) AS minute, j.state,
             greatest(0, extract(epoch FROM j.attempted_at - j.run_at) * 1000)::bigint AS wait_ms,
             greatest(0, extract(epoch FROM j.finalized_at - j.attempted_at) * 1000)::bigint AS run_ms
        FROM pgbus.job j
       WHERE j.state = ANY ('{completed,dead}'::pgbus.job_state[])
         AND j.finalized_at >= v_from AND j.finalized_at < v_to
      UNION ALL
      -- V33: completed jobs move to pgbus.job_history a minute after they end, before a rollup
      -- after a quiet spell reads them (job_history_finalized_idx, per day's partition).
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
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = 'retryable' AND j.run_at >= v_from
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

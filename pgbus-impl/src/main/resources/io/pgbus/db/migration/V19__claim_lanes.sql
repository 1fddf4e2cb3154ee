-- pgbus schema V19: a global limit counts executions, not claimed rows, and a queue may have a
-- rate limit (issue #16). See docs/schema.md, "Flow control".
--   * pgbus.job.lane: the execution a running job belongs to. A claim deals the jobs it takes over
--     lanes, one per worker slot; a slot runs its lane's jobs one after another, several to a
--     transaction under jobs-per-transaction. A global limit bounds the distinct lanes holding
--     running jobs of the queue (the handlers that can run at once), so a grouped claim of 20 jobs
--     in one slot costs one unit of the limit, not 20. NULL: a job claimed without lanes (before
--     V19, or by a caller that passes none) is a lane of its own. No index: the claim counts the
--     lanes of a queue's running jobs through job_queue_state_idx (queue, state, id).
--   * pgbus.claim takes a trailing lanes argument DEFAULT NULL (R__claim.sql): every older call
--     means the same, each job a lane of its own. The old signature goes here.
ALTER TABLE pgbus.job ADD COLUMN lane bigint;

DROP FUNCTION pgbus.claim(text[], integer, text, interval);

-- A rate limit per queue (issue #16): at most rate_limit of its jobs start (are claimed) per
-- window of rate_window, across the fleet. Windows are aligned to the epoch (a 1 minute window
-- runs from :00 to :00); rate_window_start and rate_count are the current window and the starts
-- counted in it, written by the claim under the row's lock (R__claim.sql). Both rate columns or
-- neither: a rate with no window means nothing.
ALTER TABLE pgbus.queue_limit
  ADD COLUMN rate_limit integer CONSTRAINT queue_limit_rate_chk
    CHECK (rate_limit BETWEEN 1 AND 1000000),
  ADD COLUMN rate_window interval CONSTRAINT queue_limit_rate_window_chk
    CHECK (rate_window >= interval '1 millisecond' AND rate_window <= interval '1 day'),
  ADD COLUMN rate_window_start timestamptz,
  ADD COLUMN rate_count integer NOT NULL DEFAULT 0,
  ADD CONSTRAINT queue_limit_rate_pair_chk CHECK ((rate_limit IS NULL) = (rate_window IS NULL));

-- IF EXISTS: a fresh install has no R__flow.sql definition yet (the R files run after the V files).
DROP FUNCTION IF EXISTS pgbus.queue_limit_set(text, integer, integer, text);

-- FIFO per key (issue #16): with key_fifo a queue's keyed jobs start in enqueue order (id), one at
-- a time per key: a job is claimed only when no older job of its key waits (available, scheduled,
-- retryable: a retry keeps its place, the key waits for it) or, unless key_fifo_skip_dead, lies
-- dead (a dead job holds its key's later jobs until replayed, cancelled or deleted).
-- job_key_waiting_idx finds a key's older jobs; partial on a key, so jobs without one never
-- enter it, and on the states that can hold a key back.
ALTER TABLE pgbus.queue_limit
  ADD COLUMN key_fifo boolean NOT NULL DEFAULT false,
  ADD COLUMN key_fifo_skip_dead boolean NOT NULL DEFAULT false;

CREATE INDEX job_key_waiting_idx ON pgbus.job (queue, concurrency_key, id)
  WHERE concurrency_key IS NOT NULL AND state IN ('available', 'scheduled', 'retryable', 'dead');

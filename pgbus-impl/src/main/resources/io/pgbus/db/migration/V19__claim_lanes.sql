-- pgbus schema V19: a global limit counts executions, not claimed rows (issue #16). See
-- docs/schema.md, "Flow control".
--   * pgbus.job.lane: the execution a running job belongs to. A claim deals the jobs it takes over
--     lanes, one per worker slot; a slot runs its lane's jobs one after another, several to a
--     transaction under jobs-per-transaction. A global limit bounds the distinct lanes holding
--     running jobs of the queue (the handlers that can run at once), so a grouped claim of 20 jobs
--     in one slot costs one unit of the limit, not 20. NULL: a job claimed without lanes (before
--     V19, or by a caller that passes none) is a lane of its own. No index: the claim counts the
--     lanes of a queue's running jobs through job_lease_idx, which holds only running jobs.
--   * pgbus.lane_seq: lane numbers, unique across the fleet. A claim takes one value per lane it
--     opens; nothing else reads the numbers, so gaps (a claim that rolled back) do not matter.
--   * pgbus.claim takes a trailing lanes argument DEFAULT NULL (R__claim.sql): every older call
--     means the same, each job a lane of its own. The old signature goes here.
ALTER TABLE pgbus.job ADD COLUMN lane bigint;

CREATE SEQUENCE pgbus.lane_seq AS bigint;

DROP FUNCTION pgbus.claim(text[], integer, text, interval);

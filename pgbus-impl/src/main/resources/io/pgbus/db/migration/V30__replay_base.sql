-- pgbus schema V30 (issue #29, item 4: "replay keeps the spent attempts"): what a replay means.
--
-- A replay gives a dead job a fresh start: the attempt budget it was enqueued with, and a backoff
-- that grows from its first step again. attempt stays the fence and only grows (a handler still
-- running for the job's last attempt must never match a later claim), so the replay records
-- where the new run starts instead: attempt_base, the attempts spent before the last replay. The
-- run's own attempt is attempt - attempt_base, its budget max_attempts - attempt_base; the backoff
-- follows the run's attempt. 0: never replayed (and every row of a release before V30).
--
-- An expand migration: the previous release neither reads nor writes the column (its replay
-- leaves it as it is, and extends max_attempts by the whole budget as before). A constant default
-- adds the column without a rewrite of pgbus.job.

ALTER TABLE pgbus.job
  ADD COLUMN attempt_base integer NOT NULL DEFAULT 0;

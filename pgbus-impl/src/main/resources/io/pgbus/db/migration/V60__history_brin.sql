-- pgbus schema V60 (issue #27, "a week of history in less space"): the history's finish-time
-- index becomes BRIN. A day partition is written once, in the order jobs finished (the leader's
-- moves), so finalized_at follows the heap's order within it: a summary of each 32 pages answers
-- the rollup's minute (state, finalized_at range, R__history.sql) with a bitmap of a few ranges,
-- at 40 kB a million rows against the btree's 40 MB (docs/schema.md, V60). The partition key
-- already bounds a time range to its days; the btree only ordered rows inside one.
--
-- Expand-compatible: no release needs job_history_finalized_idx for a correct answer (no unique
-- or ordering contract rests on it); the previous release's reads of pgbus.job_history keep their
-- meaning and take the BRIN or the partition bound. created_at keeps its btree: with a BRIN the
-- planner walks the primary key newest first for a time search's LIMIT (187 ms against 2.7 ms a
-- partition of 1M rows). The CREATE builds a BRIN on every partition (one sequential read each)
-- under a SHARE lock of pgbus.job_history: moves wait for it, readers and pgbus.job do not.
-- Partitions created later get it from the parent.

CREATE INDEX job_history_finalized_brin ON pgbus.job_history
  USING brin (finalized_at) WITH (pages_per_range = 32);

DROP INDEX pgbus.job_history_finalized_idx;

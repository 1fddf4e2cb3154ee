-- pgbus schema V59 (issue #27, "the 10-minute held snapshot"): a completion that moves its job
-- straight into pgbus.job_history (JobStore.COMPLETE_INTO_HISTORY) records its count as an
-- appended row here instead of upserting the one pgbus.job_history_count row of its (day, queue,
-- 'completed'). That row would be a lock every job transaction of a queue takes until its commit,
-- and under a snapshot held elsewhere a chain of versions each upsert walks. The leader folds the
-- rows into pgbus.job_history_count each round (pgbus.job_history_count_fold); readers add both.
-- The statement trigger of V47 decides (R__history.sql): only a transaction that set
-- pgbus.history_count to 'append' appends; every other writer (the archive's move, the previous
-- release's, an operator's delete) upserts as before.
--
-- An expand migration: one new table, no index (it is written once per completion and read whole:
-- a leader round's worth of rows), nothing changed in the tables of before. docs/schema.md, V59.
CREATE TABLE pgbus.job_history_count_delta (
  part  oid NOT NULL,
  queue text NOT NULL,
  state pgbus.job_state NOT NULL,
  jobs  bigint NOT NULL
);

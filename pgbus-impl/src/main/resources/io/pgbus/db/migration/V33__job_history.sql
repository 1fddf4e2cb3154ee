-- pgbus schema V33 (issue #27, "live jobs apart from history"): completed and cancelled jobs
-- move out of pgbus.job into pgbus.job_history, range-partitioned by finalized_at, one partition
-- per UTC day. The maintenance leader moves them in bounded batches a minute after they finish
-- (ArchiveStore, one statement: DELETE ... RETURNING into INSERT), creates the partitions ahead,
-- and drops whole partitions past pgbus.retention.completed. Dead jobs stay in pgbus.job: a
-- replay revives them in place, and FIFO per key (job_key_waiting_idx) counts them.
--
-- An expand migration: two new relations, nothing changed in pgbus.job, no row moved here (the
-- leader moves the old rows afterwards, a batch per round). The previous release keeps writing
-- and pruning pgbus.job as before; it does not see the rows that moved (docs/schema.md, V33).
--
-- The columns are pgbus.job's, in its order (LIKE), so that `DELETE FROM pgbus.job RETURNING *`
-- inserts as is: a column added to pgbus.job later is added here in the same V file, and
-- pgbus.job_all is created again with it.

CREATE TABLE pgbus.job_history (
  LIKE pgbus.job,
  CONSTRAINT job_history_state_chk CHECK (state OPERATOR(pg_catalog.=) ANY ('{completed,cancelled}')),
  -- A partitioned table's primary key must contain the partition key: the id alone cannot be
  -- unique here. Ids come from pgbus.job's sequence and a row moves in one statement, so an id is
  -- in one of the two tables, once.
  CONSTRAINT job_history_pkey PRIMARY KEY (id, finalized_at)
) PARTITION BY RANGE (finalized_at);

-- The safety net: a row for a day without its partition lands here instead of failing the move.
-- The leader moves only into days whose partition exists, so it stays empty; creating the
-- partition of a day with rows here fails until they are moved out (docs/operations.md).
CREATE TABLE pgbus.job_history_default PARTITION OF pgbus.job_history DEFAULT;

-- The admin API's walks (queue, state, id), throughput and the rollup (state, finalized_at),
-- batch results and retention (batch_id), the unique-key and time filters of the search.
CREATE INDEX job_history_queue_state_idx ON pgbus.job_history (queue, state, id);
CREATE INDEX job_history_finalized_idx ON pgbus.job_history (state, finalized_at) INCLUDE (queue);
CREATE INDEX job_history_batch_idx ON pgbus.job_history (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX job_history_unique_key_idx ON pgbus.job_history (unique_key) WHERE unique_key IS NOT NULL;
CREATE INDEX job_history_created_idx ON pgbus.job_history (created_at);

-- Every job, wherever it is: what the readers of finished jobs read (admin API, explain, batch
-- results, dependencies, the history rollup). A row moves in one statement, and a statement
-- reads both branches with one snapshot, so it sees each job once.
CREATE VIEW pgbus.job_all AS
  SELECT * FROM pgbus.job
  UNION ALL
  SELECT * FROM pgbus.job_history;

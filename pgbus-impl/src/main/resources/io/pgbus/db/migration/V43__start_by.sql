-- pgbus schema V43: a start-by deadline per job (issue #31, item 3). Columns, view and index only;
-- the functions are in R__start_by.sql. See docs/schema.md, "V43: start-by deadline".
--
-- start_by: a job not claimed by then never runs. pgbus.claim skips it from that instant on, and the
-- maintenance leader cancels it (state cancelled, error 'expired: not started by <start_by>',
-- audited as a cancel by 'pgbus'): a terminal state every release reads, where a new job_state value
-- would be one the previous release cannot map.
--
-- Expand only: a nullable column at the end of pgbus.job and, in the same position, of
-- pgbus.job_history (the archive moves rows with DELETE ... RETURNING * into INSERT, so both keep
-- one column order, as V33 requires), and pgbus.job_all again with it. The previous release never
-- writes start_by, reads explicit columns, and its claim runs the R__claim.sql of whichever build
-- migrated last; with this build's, a job with a deadline is never claimed late by any JVM.
ALTER TABLE pgbus.job ADD COLUMN start_by timestamptz;
ALTER TABLE pgbus.job_history ADD COLUMN start_by timestamptz;

CREATE OR REPLACE VIEW pgbus.job_all AS
  SELECT * FROM pgbus.job
  UNION ALL
  SELECT * FROM pgbus.job_history;

-- The leader's expiry reads the waiting jobs whose deadline passed, earliest first. Partial: jobs
-- without a deadline (nearly all) are not in it, so enqueue and claim pay nothing for it.
-- Built in the migration's transaction, under the lock ADD COLUMN took: since V33 pgbus.job holds
-- only the jobs that can still run and the dead ones (history is pgbus.job_history), so the scan
-- is short (17 ms for 100,000 rows of 150 bytes here). Not CONCURRENTLY: Flyway keeps a transaction open
-- on its lock connection, which a concurrent build waits for without end.
CREATE INDEX job_start_by_idx ON pgbus.job (start_by) WHERE start_by IS NOT NULL;

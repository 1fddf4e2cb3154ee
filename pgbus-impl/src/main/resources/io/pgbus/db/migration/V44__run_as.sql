-- pgbus schema V44: the handler runs as the enqueuer (issue #30, opt-in per queue with
-- pgbus.queue.<name>.run-as=enqueuer). See docs/schema.md, "V44: run as the enqueuer".
--
-- run_as is the name of the principal a job's handler runs as, or NULL: run as today (no caller).
-- The Java API writes it only for a queue that runs as the enqueuer, and only with an
-- authenticated caller (it refuses the enqueue otherwise). It is not enqueued_by: that one falls
-- back to the database role (session_user), which must never become an application identity.
--
-- Like enqueued_by (V7) it is the column default that reads a transaction-local setting,
-- pgbus.run_as, which the Java API sets in the same statement as pgbus.principal; an SQL client
-- that enqueues into such a queue sets it too (set_config('pgbus.run_as', 'alice', true)), or the
-- job fails closed at its first run. The enqueue functions keep their signatures.
--
-- Expand only: a nullable column at the end of pgbus.job and, at the same position, of
-- pgbus.job_history (so that the archive's DELETE ... RETURNING * still inserts as is), and
-- pgbus.job_all again with it. A build before V44 reads named columns and never sets the setting:
-- its jobs get NULL and it runs unchanged.
-- The checks are added NOT VALID, apart from the column: a CHECK given with ADD COLUMN is verified
-- by a scan of every row under the ACCESS EXCLUSIVE lock (0.4 s for 3M narrow rows here), while
-- every existing row holds NULL, which passes; new rows are checked all the same.
ALTER TABLE pgbus.job ADD COLUMN run_as text;
ALTER TABLE pgbus.job
  ADD CONSTRAINT job_run_as_check CHECK (length(run_as) BETWEEN 1 AND 256) NOT VALID;
ALTER TABLE pgbus.job
  ALTER COLUMN run_as SET DEFAULT nullif(pg_catalog.current_setting('pgbus.run_as', true), '');

ALTER TABLE pgbus.job_history ADD COLUMN run_as text;
ALTER TABLE pgbus.job_history
  ADD CONSTRAINT job_history_run_as_check CHECK (length(run_as) BETWEEN 1 AND 256) NOT VALID;

-- CREATE OR REPLACE keeps the view's dependents (functions read it by name) and may only add
-- columns at the end, which is where run_as is in both tables.
CREATE OR REPLACE VIEW pgbus.job_all AS
  SELECT * FROM pgbus.job
  UNION ALL
  SELECT * FROM pgbus.job_history;

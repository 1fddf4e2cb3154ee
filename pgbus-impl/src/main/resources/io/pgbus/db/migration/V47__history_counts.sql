-- pgbus schema V47 (issues #29 and #27, "counts that are exact and fast"): the finished jobs of
-- pgbus.job_history counted per day partition, queue and state, kept by statement triggers on
-- pgbus.job_history (R__history.sql), so that the admin API's counts read a few hundred rows
-- instead of every history row, and stay exact whoever writes the history: this release's
-- archive, the previous one's, an operator's DELETE, the reencryption's UPDATE.
--
-- An expand migration: two new small tables and four statement triggers on pgbus.job_history
-- (their function is R__history.sql's), nothing changed in pgbus.job. No row is counted
-- here: a partition is trusted only once the leader has recounted it under a SHARE lock
-- (pgbus.job_history_recount, one partition per call, ArchiveStore), and until every partition is
-- counted the readers count the history rows as before (capped). docs/schema.md, V47.

-- Jobs per (partition, queue, state). part is the partition's pg_class oid, not its day: a
-- dropped partition's rows stop counting with it (readers join pg_inherits), whoever dropped it,
-- and a partition created again for the same day starts from its own recount.
CREATE TABLE pgbus.job_history_count (
  part  oid NOT NULL,
  queue text NOT NULL,
  state pgbus.job_state NOT NULL,
  jobs  bigint NOT NULL,
  CONSTRAINT job_history_count_pkey PRIMARY KEY (part, queue, state)
);

-- The partitions whose counts are whole: recounted once after the triggers existed.
CREATE TABLE pgbus.job_history_counted (
  part       oid PRIMARY KEY,
  counted_at timestamptz NOT NULL DEFAULT now()
);

-- The triggers. Here rather than in R__history.sql: an R file runs on whatever version a
-- migration stops at (a target before V33 has no pgbus.job_history), and an unchanged R file is not
-- run again after later versions. Their function is R__history.sql's, which a fresh install
-- applies after every V file: until then a placeholder that counts nothing, created only when the
-- function is not there yet (never over R__history.sql's). Nothing is counted in that instant: no
-- partition is marked counted before the leader recounts it, after the migration.
DO $$
BEGIN
  IF pg_catalog.to_regprocedure('pgbus.job_history_count_delta()') IS NULL THEN
    CREATE FUNCTION pgbus.job_history_count_delta() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pgbus, pg_temp
      AS 'BEGIN RETURN NULL; END';
  END IF;
END $$;

-- Statement triggers with transition tables: one grouped upsert per writing statement, whatever
-- its row count. A partition's own DELETE or TRUNCATE (by name) does not fire them: docs/schema.md.
CREATE TRIGGER job_history_count_insert AFTER INSERT ON pgbus.job_history
  REFERENCING NEW TABLE AS job_history_new
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();
CREATE TRIGGER job_history_count_delete AFTER DELETE ON pgbus.job_history
  REFERENCING OLD TABLE AS job_history_old
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();
CREATE TRIGGER job_history_count_update AFTER UPDATE ON pgbus.job_history
  REFERENCING OLD TABLE AS job_history_old NEW TABLE AS job_history_new
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();
CREATE TRIGGER job_history_count_truncate AFTER TRUNCATE ON pgbus.job_history
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();

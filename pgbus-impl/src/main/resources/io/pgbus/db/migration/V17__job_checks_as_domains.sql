-- pgbus schema V17: pgbus.job's single-column CHECKs become domains (issue #15, "Enqueue at the
-- raw ceiling"). Same rules, same constraint names; see docs/schema.md "V17" and
-- docs/performance.md "Enqueue at the raw ceiling".
--
-- Why: PostgreSQL rebuilds a table's CHECK constraints for every INSERT and UPDATE statement
-- (ExecRelCheck reads each constraint's stored node tree with stringToNode, plans it and compiles
-- it, once per statement, not per session). On pgbus.job that was 10 constraints, about 580,000
-- of the 800,000 CPU instructions of a one-row INSERT (callgrind), and the same again for every
-- claim, completion and progress UPDATE, which check rows whose constrained columns they never
-- touch. A domain's constraints are compiled once per session (the type cache), and checked only
-- where a value of the domain is written: an UPDATE that does not assign the column pays nothing.
--
-- Only the rule that spans two columns stays on the table (trace_state needs a trace_parent),
-- as a small CHECK under its old name. New CHECKs on pgbus.job put the per-statement cost back:
-- prefer a domain.
--
-- How, without a rewrite or a scan of a big job table: the column types change to domains that
-- have no constraint yet (a binary-coercible change: no rewrite, and the indexes are kept), the
-- table CHECKs are dropped, and the rules are added to the domains NOT VALID (every existing row
-- passed the same rule as a table CHECK; V11's and V12's were NOT VALID for rows that were all
-- null). The ALTER TABLE holds its ACCESS EXCLUSIVE lock only for catalog work.
CREATE DOMAIN pgbus.job_priority AS smallint;
CREATE DOMAIN pgbus.job_max_attempts AS integer;
CREATE DOMAIN pgbus.job_cancel_attempt AS integer;
CREATE DOMAIN pgbus.job_unique_key AS text;
CREATE DOMAIN pgbus.trace_parent AS text;
CREATE DOMAIN pgbus.trace_state AS text;
CREATE DOMAIN pgbus.job_enqueued_by AS text;
CREATE DOMAIN pgbus.job_correlation_id AS text;
CREATE DOMAIN pgbus.job_progress AS jsonb;
CREATE DOMAIN pgbus.job_result AS jsonb;
CREATE DOMAIN pgbus.job_concurrency_key AS text;

ALTER TABLE pgbus.job
  DROP CONSTRAINT job_priority_check,
  DROP CONSTRAINT job_max_attempts_check,
  DROP CONSTRAINT job_cancel_attempt_check,
  DROP CONSTRAINT job_unique_key_check,
  DROP CONSTRAINT job_trace_parent_check,
  DROP CONSTRAINT job_trace_state_check,
  DROP CONSTRAINT job_enqueued_by_check,
  DROP CONSTRAINT job_correlation_id_check,
  DROP CONSTRAINT job_progress_shape,
  DROP CONSTRAINT job_result_size_chk,
  DROP CONSTRAINT job_concurrency_key_chk,
  ALTER COLUMN priority TYPE pgbus.job_priority,
  ALTER COLUMN max_attempts TYPE pgbus.job_max_attempts,
  ALTER COLUMN cancel_attempt TYPE pgbus.job_cancel_attempt,
  ALTER COLUMN unique_key TYPE pgbus.job_unique_key,
  ALTER COLUMN trace_parent TYPE pgbus.trace_parent,
  ALTER COLUMN trace_state TYPE pgbus.trace_state,
  ALTER COLUMN enqueued_by TYPE pgbus.job_enqueued_by,
  ALTER COLUMN correlation_id TYPE pgbus.job_correlation_id,
  ALTER COLUMN progress TYPE pgbus.job_progress,
  ALTER COLUMN result TYPE pgbus.job_result,
  ALTER COLUMN concurrency_key TYPE pgbus.job_concurrency_key,
  -- The one rule across two columns (V6). NOT VALID: the rows passed it as V6's CHECK.
  ADD CONSTRAINT job_trace_state_check CHECK (trace_state IS NULL OR trace_parent IS NOT NULL)
    NOT VALID;

ALTER DOMAIN pgbus.job_priority
  ADD CONSTRAINT job_priority_check CHECK (VALUE BETWEEN -100 AND 100) NOT VALID;
ALTER DOMAIN pgbus.job_max_attempts
  ADD CONSTRAINT job_max_attempts_check CHECK (VALUE >= 1) NOT VALID;
ALTER DOMAIN pgbus.job_cancel_attempt
  ADD CONSTRAINT job_cancel_attempt_check CHECK (VALUE >= 1) NOT VALID;
ALTER DOMAIN pgbus.job_unique_key
  ADD CONSTRAINT job_unique_key_check CHECK (length(VALUE) BETWEEN 1 AND 255) NOT VALID;
ALTER DOMAIN pgbus.trace_parent
  ADD CONSTRAINT job_trace_parent_check CHECK (
    VALUE ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
    AND substr(VALUE, 4, 32) <> '00000000000000000000000000000000'
    AND substr(VALUE, 37, 16) <> '0000000000000000') NOT VALID;
ALTER DOMAIN pgbus.trace_state
  ADD CONSTRAINT job_trace_state_check CHECK (
    length(VALUE) <= 512 AND VALUE ~ '^[\x20-\x7e]*$') NOT VALID;
ALTER DOMAIN pgbus.job_enqueued_by
  ADD CONSTRAINT job_enqueued_by_check CHECK (length(VALUE) BETWEEN 1 AND 256) NOT VALID;
ALTER DOMAIN pgbus.job_correlation_id
  ADD CONSTRAINT job_correlation_id_check CHECK (length(VALUE) BETWEEN 1 AND 128) NOT VALID;
-- A domain's CHECK sees NULL too (a column left out of an INSERT is a NULL of the domain), and
-- this one would be false for it (the CASE's ELSE): hence V11's "IS NULL OR".
ALTER DOMAIN pgbus.job_progress ADD CONSTRAINT job_progress_shape CHECK (
  VALUE IS NULL OR (
    jsonb_typeof(VALUE) = 'object'
    AND octet_length(VALUE::text) <= 1024
    AND CASE WHEN jsonb_typeof(VALUE -> 'percent') = 'number'
             THEN (VALUE ->> 'percent')::numeric BETWEEN 0 AND 100
             ELSE false END
    AND coalesce(jsonb_typeof(VALUE -> 'message'), 'null') IN ('string', 'null')
    AND coalesce(length(VALUE ->> 'message'), 0) <= 200
  )
) NOT VALID;
ALTER DOMAIN pgbus.job_result
  ADD CONSTRAINT job_result_size_chk CHECK (octet_length(VALUE::text) <= 65536) NOT VALID;
-- V14's concurrency key bound, as EnqueueOptions.MAX_CONCURRENCY_KEY_LENGTH in Java.
ALTER DOMAIN pgbus.job_concurrency_key
  ADD CONSTRAINT job_concurrency_key_chk CHECK (length(VALUE) BETWEEN 1 AND 255) NOT VALID;

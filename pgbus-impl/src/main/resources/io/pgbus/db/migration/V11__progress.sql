-- pgbus schema V11: a running job's progress (issue #14, JobContext.progress). See docs/schema.md.
--
-- {"percent": 0..100, "message": text or null (<= 200 characters), "at": when it was reported,
-- "attempt": the attempt that reported it}. Written by the worker in its own short statement,
-- at most about once a second per job, fenced by (id, attempt, state = running); kept after the
-- job ends, so the last report stays visible. Null until a handler reports.
ALTER TABLE pgbus.job ADD COLUMN progress jsonb;

-- NOT VALID: every existing row is null, so there is nothing to check, and a big job table is not
-- scanned under the ALTER's lock. New and updated rows are checked all the same.
ALTER TABLE pgbus.job ADD CONSTRAINT job_progress_shape CHECK (
  progress IS NULL OR (
    jsonb_typeof(progress) = 'object'
    AND octet_length(progress::text) <= 1024
    AND CASE WHEN jsonb_typeof(progress -> 'percent') = 'number'
             THEN (progress ->> 'percent')::numeric BETWEEN 0 AND 100
             ELSE false END
    AND coalesce(jsonb_typeof(progress -> 'message'), 'null') IN ('string', 'null')
    AND coalesce(length(progress ->> 'message'), 0) <= 200
  )
) NOT VALID;

-- pgbus schema V12: a job's result (issue #17, "Job results"). Tables and constraints only. See
-- docs/schema.md, "result".
--
-- Written only by the completing UPDATE, in the handler's transaction, and only when the handler
-- returned a result (Outcome.complete(Object) / completeJson): result-less completion is the
-- unchanged statement. Adding a nullable column without a default rewrites no rows.
ALTER TABLE pgbus.job ADD COLUMN result jsonb;

-- The same 64 KiB bound as Outcome.MAX_RESULT_BYTES, for writers that skip the Java check.
-- NOT VALID: existing rows all have a null result; skips a scan of the job table under lock.
ALTER TABLE pgbus.job
  ADD CONSTRAINT job_result_size_chk
  CHECK (result IS NULL OR octet_length(result::text) <= 65536) NOT VALID;

-- pgbus schema V21 (issue #15): the checks of pgbus.job_progress and pgbus.job_result become one
-- call each of a strict function ("Enqueue at the raw ceiling"; same rules, same constraint
-- names), and the SQL payload limit is held to the range of pgbus.max-payload-bytes ("Bad input
-- and limits"). See docs/schema.md "V21" and docs/performance.md "Enqueue at the raw ceiling".
--
-- Why: an INSERT sets up the check of every domain column per statement, the columns it leaves
-- out included (the planner coerces a NULL to the domain for each). progress and result are never
-- written at enqueue, yet their checks were set up for every enqueue statement: progress's shape
-- is the largest expression of the table, about 21,000 of a single enqueue's 462,000 CPU
-- instructions (callgrind). A call of a strict function is one node to set up, and a NULL never
-- calls it; the rule itself is evaluated only when a progress report or a result is written.
--
-- The functions are created here because the constraints need them before the repeatable
-- migrations run; their current definitions are in R__checks.sql. The constraints are added NOT
-- VALID, as V17's were: every row passed the same rule.
CREATE FUNCTION pgbus.job_progress_valid(progress jsonb) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    RETURN jsonb_typeof(progress) = 'object'
       AND octet_length(progress::text) <= 1024
       AND CASE WHEN jsonb_typeof(progress -> 'percent') = 'number'
                THEN (progress ->> 'percent')::numeric BETWEEN 0 AND 100
                ELSE false END
       AND coalesce(jsonb_typeof(progress -> 'message'), 'null') IN ('string', 'null')
       AND coalesce(length(progress ->> 'message'), 0) <= 200;
  END $$;

CREATE FUNCTION pgbus.job_result_valid(result jsonb) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    RETURN octet_length(result::text) <= 65536;
  END $$;

ALTER DOMAIN pgbus.job_progress DROP CONSTRAINT job_progress_shape;
ALTER DOMAIN pgbus.job_progress
  ADD CONSTRAINT job_progress_shape CHECK (pgbus.job_progress_valid(VALUE)) NOT VALID;
ALTER DOMAIN pgbus.job_result DROP CONSTRAINT job_result_size_chk;
ALTER DOMAIN pgbus.job_result
  ADD CONSTRAINT job_result_size_chk CHECK (pgbus.job_result_valid(VALUE)) NOT VALID;

-- pgbus.setting.max_payload_bytes: the range Java allows for pgbus.max-payload-bytes
-- (EngineConfig.MAX_PAYLOAD_BYTES, 2..268435456), so that an UPDATE by hand cannot lift the SQL
-- limit past what the Java API refuses. NOT VALID: a value set by hand before stays until the
-- next engine start writes its own.
ALTER TABLE pgbus.setting
  ADD CONSTRAINT setting_max_payload_bytes_range
    CHECK (max_payload_bytes BETWEEN 2 AND 268435456) NOT VALID;

-- pgbus schema V7: who did it (issue #11). See docs/schema.md and docs/operations.md "Audit trail".
--   * every job records who enqueued it (enqueued_by) and an optional correlation id;
--   * cancel, replay, pause and resume write a row to pgbus.audit in the caller's transaction.
-- V1..V5 are applied in deployed databases and are never edited: what changes is replaced here.

-- ---------------------------------------------------------------------------------------------
-- Who enqueued a job
-- ---------------------------------------------------------------------------------------------
--
-- Filled by column defaults, not by a new parameter of pgbus.enqueue*: the Java API sets the
-- transaction-local settings pgbus.principal and pgbus.correlation_id in the same statement as
-- its insert (set_config(..., true)), and an SQL client may set them too. Without a principal the
-- database role (session_user) is recorded. The enqueue functions keep their signatures, and the
-- cost is two current_setting calls per inserted row (see docs/schema.md for the measurement).
-- Columns are added first and given their defaults after, so existing rows stay NULL ("unknown")
-- rather than all naming the role that ran this migration.
ALTER TABLE pgbus.job
  ADD COLUMN enqueued_by text
    CONSTRAINT job_enqueued_by_check CHECK (length(enqueued_by) BETWEEN 1 AND 256),
  ADD COLUMN correlation_id text
    CONSTRAINT job_correlation_id_check CHECK (length(correlation_id) BETWEEN 1 AND 128);
ALTER TABLE pgbus.job
  ALTER COLUMN enqueued_by
    SET DEFAULT coalesce(nullif(current_setting('pgbus.principal', true), ''), session_user::text),
  ALTER COLUMN correlation_id
    SET DEFAULT nullif(current_setting('pgbus.correlation_id', true), '');

-- ---------------------------------------------------------------------------------------------
-- Audit trail
-- ---------------------------------------------------------------------------------------------

-- One row per operator action, written in the action's own transaction: a rollback leaves none.
-- Pruned by the engine after pgbus.retention.audit (default 30 days).
CREATE TABLE pgbus.audit (
  id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at     timestamptz NOT NULL DEFAULT now(),
  actor  text NOT NULL CHECK (length(actor) BETWEEN 1 AND 256),
  action text NOT NULL CHECK (action IN ('cancel', 'replay', 'pause', 'resume')),
  queue  text NOT NULL,
  job_id bigint,                                   -- NULL for pause and resume
  detail jsonb
);
CREATE INDEX audit_job_idx ON pgbus.audit (job_id) WHERE job_id IS NOT NULL;
CREATE INDEX audit_queue_idx ON pgbus.audit (queue, id);

-- Who is acting: the principal the Java API set for this transaction, else the database role.
CREATE FUNCTION pgbus.actor() RETURNS text
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$ SELECT coalesce(nullif(current_setting('pgbus.principal', true), ''), session_user::text) $$;

-- Pause of V3, now audited. paused_by keeps its meaning (the worker id, or the SQL user).
CREATE OR REPLACE FUNCTION pgbus.pause(queue text, paused_by text DEFAULT NULL) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    INSERT INTO pgbus.queue_pause (queue, paused_by)
    VALUES (pgbus.queue(pause.queue), coalesce(pause.paused_by, current_user::text))
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    INSERT INTO pgbus.audit (actor, action, queue) VALUES (pgbus.actor(), 'pause', pause.queue);
    RETURN true;
  END $$;

-- Resume of V3, now audited.
CREATE OR REPLACE FUNCTION pgbus.resume(queue text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(resume.queue);
    v_due   timestamptz;
  BEGIN
    DELETE FROM pgbus.queue_pause p WHERE p.queue = v_queue;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    INSERT INTO pgbus.audit (actor, action, queue) VALUES (pgbus.actor(), 'resume', resume.queue);
    SELECT min(j.run_at) INTO v_due
      FROM pgbus.job j
     WHERE j.queue = v_queue AND j.state IN ('available', 'scheduled', 'retryable');
    IF v_due IS NOT NULL THEN
      PERFORM pgbus.notify(v_queue, v_due);
    END IF;
    RETURN true;
  END $$;

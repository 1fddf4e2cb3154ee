-- pgbus schema V42: a schedule's overlap policy (issue #31, item 1). Columns and constraints only.
-- See docs/schema.md, "V42: schedule overlap".
--
-- overlap: what a run does while the previous run's job still waits or runs ('allow', the default
-- and what every release before V42 does; 'skip'; 'queue'; 'cancel_previous'). last_job_id: the
-- job of the latest run the leader dealt with, and last_outcome what it did with that run. The
-- leader reads last_job_id and that job's state in the transaction that advances the schedule
-- (ScheduleEnqueuer), so the policy holds across JVMs and leader changes without memory.
--
-- Expand only: the previous release reads and writes schedules through explicit column lists, so
-- it never sees the new columns; its creates get 'allow', and its leader ignores the policy (it
-- enqueues as before, and leaves last_job_id as it was) until the fleet runs this build.
-- last_job_id is no foreign key: jobs move to pgbus.job_history and are pruned, and a run whose job
-- is gone has ended.

-- The rule of pgbus.schedule.overlap, as its CHECK calls it: refuses with check_violation and a
-- message that names the value and the allowed ones. Its current definition is in R__checks.sql;
-- OR REPLACE: a schema migrated to an older target already ran the current R__checks.sql.
CREATE OR REPLACE FUNCTION pgbus.schedule_overlap_valid(overlap text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF schedule_overlap_valid.overlap IN ('allow', 'skip', 'queue', 'cancel_previous') THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: unknown overlap policy % for a schedule: use allow, skip, queue or cancel_previous',
      pg_catalog.quote_literal(pg_catalog.left(schedule_overlap_valid.overlap, 80))
      USING ERRCODE = 'check_violation';
  END $$;

ALTER TABLE pgbus.schedule
  ADD COLUMN overlap text NOT NULL DEFAULT 'allow'
    CONSTRAINT schedule_overlap_chk CHECK (pgbus.schedule_overlap_valid(overlap)),
  ADD COLUMN last_job_id bigint,
  ADD COLUMN last_outcome text
    CONSTRAINT schedule_last_outcome_chk
    CHECK (last_outcome IN ('enqueued', 'skipped', 'queued', 'cancelled_previous'));

-- A run skipped by its overlap policy is audited ('schedule_skip': the schedule, its queue, the
-- previous run's job in job_id, the skipped run's instant in detail).
ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger', 'limit', 'schedule_skip'));

-- pgbus schema V18: who changed a schedule (issue #17, "Recurring schedules"). Tables, columns and
-- constraints only. See docs/schema.md, "V18: schedule audit".
--
-- Every create, update, pause, resume, delete and trigger of a schedule (Schedules API, admin API,
-- and the configuration's crons at start) writes a row to pgbus.audit in the statement that makes
-- the change (ScheduleStore), so a rollback leaves neither. The schedule's name is a column of its
-- own: a schedule's history is one range of audit_schedule_idx, and a schedule outlives no audit
-- row it needs (a deleted schedule's history stays until retention). The queue is the schedule's.

ALTER TABLE pgbus.audit
  ADD COLUMN schedule text
    CONSTRAINT audit_schedule_check CHECK (length(schedule) BETWEEN 1 AND 63);

-- Partial: job and queue actions (the bulk of the table) are not indexed.
CREATE INDEX audit_schedule_idx ON pgbus.audit (schedule, id) WHERE schedule IS NOT NULL;

ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger'));

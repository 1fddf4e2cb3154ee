-- pgbus schema V37: who changed a queue's limits (issue #29, "live limit and policy changes with
-- audit"). Constraints only. See docs/schema.md, "V37: limit audit".
--
-- A change of a queue's flow control through the admin API or the console (QueueLimits) writes a
-- row to pgbus.audit in the transaction that changes pgbus.queue_limit: action 'limit', the
-- queue, and in detail the limits before and after ({"before": {...} | null, "after": ...}). Only
-- the allowed actions grow: a build before V37 never writes 'limit' and reads actions as text, so
-- it runs unchanged on this schema (expand only). Engines writing their configured limits at start
-- are not audited (they are the configuration, not an operator).

ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger', 'limit'));

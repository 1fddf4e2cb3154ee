-- pgbus schema V46: `pgbus reencrypt` is audited in pgbus.audit (issue #30), not only logged.
-- Constraints only. See docs/schema.md, "V46: reencrypt audit".
--
-- Each batch the command re-seals writes one row in its own transaction: action 'reencrypt', the
-- queue, the actor, and in detail the key now sealing, the live and finished jobs re-sealed and
-- the id range. Only the allowed actions grow ('schedule_skip' is V42's): a build before V46
-- never writes 'reencrypt' and reads actions as text, so it runs unchanged (expand only). The
-- new check is added NOT VALID and left so: every existing row holds an action the old check
-- allowed, a subset of these, and a validating scan in the migration's transaction would hold its
-- lock on pgbus.audit for the length of the scan.

ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger', 'limit', 'schedule_skip',
                    'reencrypt')) NOT VALID;

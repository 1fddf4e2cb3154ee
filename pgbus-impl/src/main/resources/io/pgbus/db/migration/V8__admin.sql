-- pgbus schema V8: the operator's API (issue #13): indexes for search and counts on a table of a
-- million jobs, and the audit actions of bulk retry and delete. Tables and indexes only.
-- See docs/admin-api.md and docs/performance.md ("Admin queries").

-- Search by queue (and state), newest first, and the capped counts per queue and state: each
-- wanted state is one range of this index in id order. Also the loose index scan that lists the
-- queues (one probe per queue).
CREATE INDEX job_queue_state_idx ON pgbus.job (queue, state, id);

-- Search by state without a queue, newest first.
CREATE INDEX job_state_idx ON pgbus.job (state, id);

-- Search by unique key in every state (job_unique_idx covers waiting and running jobs only).
-- Only keyed jobs pay for it.
CREATE INDEX job_unique_key_idx ON pgbus.job (unique_key) WHERE unique_key IS NOT NULL;

-- The admin API audits two more actions: retry (made available now) and delete (a finished job).
ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete'));

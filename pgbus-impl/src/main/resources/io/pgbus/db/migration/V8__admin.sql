-- pgbus schema V8: the operator's API (issue #13): indexes for search and counts on a table of a
-- million jobs, and the audit actions of bulk retry and delete. Tables and indexes only.
-- See docs/admin-api.md and docs/performance.md ("Admin queries").

-- Search by queue and state, newest first, and the capped counts per queue and state: each
-- wanted (queue, state) is one range of this index in id order. A search without a queue walks
-- each queue (listed by a loose index scan on this index, one probe per queue). The one full
-- index V8 adds to every enqueue and completion: docs/performance.md, "Admin queries".
CREATE INDEX job_queue_state_idx ON pgbus.job (queue, state, id);

-- Search by unique key in every state (job_unique_idx covers waiting and running jobs only).
-- Only keyed jobs pay for it.
CREATE INDEX job_unique_key_idx ON pgbus.job (unique_key) WHERE unique_key IS NOT NULL;

-- The admin API audits two more actions: retry (made available now) and delete (a finished job).
ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete'));

-- Search of dead jobs by payload containment ("find the failed order 42"): jsonb_path_ops serves
-- @>. Partial on dead jobs, so an enqueue never touches it; a job enters it when it dies.
CREATE INDEX job_dead_payload_idx ON pgbus.job USING gin (payload jsonb_path_ops)
  WHERE state = 'dead';

-- Search by creation time. A BRIN index was tried (ids ascend with created_at) and measured
-- slower per enqueue than this btree (docs/performance.md, "Admin queries").
CREATE INDEX job_created_idx ON pgbus.job (created_at);

-- Throughput per queue and minute: V1's job_finalized_idx (retention's) with the queue included,
-- so the last hour's finished jobs are read from the index alone once vacuum has marked their
-- pages all-visible. It replaces the V1 index: one index per finished job either way.
CREATE INDEX job_finalized_queue_idx ON pgbus.job (state, finalized_at) INCLUDE (queue)
  WHERE state IN ('completed', 'dead', 'cancelled');
DROP INDEX pgbus.job_finalized_idx;

-- pgbus schema V52 (issue #31, item 5): workflows that branch. Tables, columns and constraints
-- only; the functions are in R__workflow.sql and R__links.sql. See docs/batches.md, "Workflows",
-- and docs/schema.md, "V52: workflows".
--
-- Expand only. pgbus.job is not widened (issue #27): a workflow's jobs are named in a side table
-- written only for them, so a plain enqueue writes nothing more. A build before V52 reads edges
-- without their kind (every edge it writes is a success edge, the column's default) and never
-- sees a not_taken edge unless a workflow wrote one.

-- One row per workflow: its name, who enqueued it and when, and whether an operator cancelled it.
CREATE TABLE pgbus.workflow (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name         text NOT NULL CONSTRAINT workflow_name_chk CHECK (length(name) BETWEEN 1 AND 200),
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text,
  cancelled_at timestamptz,
  cancelled_by text
);

-- The members of a workflow, keyed by job id: its nodes (node = the node's name) and the jobs
-- their handlers enqueued (node NULL: fan-out). No foreign key to the job: a finished member is
-- archived or pruned, and the admin read shows it with state null; the leader deletes a workflow
-- once none of its members is left (LinkStore). queue is kept for a pruned member's node.
CREATE TABLE pgbus.workflow_job (
  job_id      bigint PRIMARY KEY,
  workflow_id bigint NOT NULL REFERENCES pgbus.workflow (id) ON DELETE CASCADE,
  node        text,
  queue       text NOT NULL
);
CREATE INDEX workflow_job_workflow_idx ON pgbus.workflow_job (workflow_id, job_id);

-- An edge's kind: success (today's dependency: the child runs when the parent completes), failure
-- (runs only when the parent ends dead or cancelled) or result (runs when the parent completes and
-- jsonb_path_match(result, predicate) holds). A constant default: no rewrite; the checks are added
-- NOT VALID and then validated, which reads the table without blocking its writers.
ALTER TABLE pgbus.job_dependency ADD COLUMN kind text NOT NULL DEFAULT 'success';
ALTER TABLE pgbus.job_dependency ADD COLUMN predicate jsonpath;
ALTER TABLE pgbus.job_dependency ADD CONSTRAINT job_dependency_kind_chk
  CHECK (kind IN ('success', 'failure', 'result')
         AND (predicate IS NOT NULL) = (kind = 'result')) NOT VALID;
ALTER TABLE pgbus.job_dependency VALIDATE CONSTRAINT job_dependency_kind_chk;

-- not_taken: the edge was decided against its child (a failure edge whose parent completed, a
-- result edge whose predicate did not hold); the child is cancelled, "branch not taken".
ALTER TABLE pgbus.job_dependency DROP CONSTRAINT job_dependency_state_check;
ALTER TABLE pgbus.job_dependency ADD CONSTRAINT job_dependency_state_check
  CHECK (state IN ('waiting', 'completed', 'failed', 'not_taken')) NOT VALID;
ALTER TABLE pgbus.job_dependency VALIDATE CONSTRAINT job_dependency_state_check;

-- The audit actions of a whole workflow's cancel and retry (queue: '*', detail: the workflow id
-- and counts). NOT VALID as V46 did: every existing row holds an action the old check allowed.
ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger', 'limit', 'schedule_skip',
                    'reencrypt', 'replace', 'workflow_cancel', 'workflow_retry')) NOT VALID;

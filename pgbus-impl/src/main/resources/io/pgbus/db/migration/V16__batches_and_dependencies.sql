-- pgbus schema V16: batches and job dependencies (issue #17, "Batches", "Dependencies"). Tables,
-- columns and indexes only; the functions are in R__links.sql. See docs/schema.md, "Batches and
-- dependencies", and docs/batches.md.
--
-- Nothing here costs a job that is in no batch and has no dependents: the finishing statements
-- (JobStore) return linked (and batch_id), and only when it is set does the same transaction call
-- pgbus.job_finished. No trigger is involved.

-- One row per batch: the counter its members' finishing transactions update, and the callback
-- job enqueued (once) by the transaction that brings pending to 0. The row lock on this counter
-- serialises the batch's finishing members, so exactly one of them sees pending reach 0.
CREATE TABLE pgbus.batch (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  size               integer NOT NULL CHECK (size BETWEEN 1 AND 10000),
  pending            integer NOT NULL CHECK (pending >= 0),     -- members not yet finished
  completed          integer NOT NULL DEFAULT 0,
  dead               integer NOT NULL DEFAULT 0,
  cancelled          integer NOT NULL DEFAULT 0,
  callback_queue     pgbus.queue_name NOT NULL,
  callback_payload   jsonb NOT NULL,
  callback_priority  smallint NOT NULL DEFAULT 0,
  callback_attempts  integer NOT NULL DEFAULT 25,
  callback_job_id    bigint,                                    -- set when the callback is enqueued
  created_at         timestamptz NOT NULL DEFAULT now(),
  finished_at        timestamptz,
  CONSTRAINT batch_counts_chk CHECK (completed + dead + cancelled + pending = size)
);

-- The callback's own batch, for JobContext.batch() in the callback (a probe by its job id).
CREATE INDEX batch_callback_idx ON pgbus.batch (callback_job_id) WHERE callback_job_id IS NOT NULL;

-- The batch a job belongs to (NULL: none; a replayed dead member leaves its batch, see
-- docs/batches.md), and whether its end must be reported to pgbus.job_finished: it is in a batch,
-- some job waits on it, or it waits on some job. Nullable / a constant default: adding them
-- rewrites no rows.
ALTER TABLE pgbus.job ADD COLUMN batch_id bigint;
ALTER TABLE pgbus.job ADD COLUMN linked boolean NOT NULL DEFAULT false;

-- The members of a batch (admin views); partial, so jobs in no batch are not indexed.
CREATE INDEX job_batch_idx ON pgbus.job (batch_id) WHERE batch_id IS NOT NULL;

-- One row per dependency edge: job_id runs only after depends_on completed. state: waiting (the
-- dependency has not finished), completed (it did; result is its result then), failed (it died or
-- was cancelled and on_failure = 'hold': the dependent waits until a replay of the dependency
-- completes). With on_failure = 'cancel' the dependent is cancelled instead. No foreign keys: a
-- finished dependency may be pruned, and the edge keeps what the dependent needs (its result).
CREATE TABLE pgbus.job_dependency (
  depends_on  bigint NOT NULL,
  job_id      bigint NOT NULL,
  on_failure  text NOT NULL CHECK (on_failure IN ('hold', 'cancel')),
  state       text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'completed', 'failed')),
  result      jsonb CHECK (result IS NULL OR octet_length(result::text) <= 65536),
  PRIMARY KEY (depends_on, job_id)
);

-- A dependent's own edges: whether it may run yet, and its dependencies' results.
CREATE INDEX job_dependency_job_idx ON pgbus.job_dependency (job_id);

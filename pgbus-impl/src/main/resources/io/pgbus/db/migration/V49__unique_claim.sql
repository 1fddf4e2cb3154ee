-- pgbus schema V49: uniqueness over a period and chosen states, replace and debounce by unique key
-- (issue #31, items 2 and 4). Table and audit action only; the functions are in R__unique.sql.
-- See docs/schema.md, "V49: unique claims".
--
-- Why a table: job_unique_idx (V3) is a partial unique index on pgbus.job, so it can only say
-- "one waiting or running job per (queue, unique_key)". A finished job lives in
-- pgbus.job_history, partitioned by day, and no unique index spans two tables or a partitioned
-- table without the partition key. So "one job per key per period, finished ones included" is a
-- row here, one per (queue, unique_key), primary key: pgbus.enqueue_unique inserts it (or takes
-- over an expired one under its row lock) in the caller's transaction, before the job, so two
-- transactions enqueuing the same key queue on that row instead of both reading "none".
--
-- job_id: the job that holds the key (NULL only inside the transaction that takes the claim, until
-- its job is inserted). until: the end of the period. states: the finished states in which that job
-- still holds the key (waiting and running always do). A claim past its until holds nothing; the
-- maintenance leader deletes those in bounded batches (its prune round) only as
-- housekeeping, never for correctness.
--
-- Expand only: a new table the previous release never reads. Its plain unique keys still go
-- through pgbus.enqueue_job and job_unique_idx, unchanged, and are still refused while a waiting or
-- running job holds the key, whoever took a claim.
CREATE TABLE pgbus.unique_claim (
  queue      text        NOT NULL,
  unique_key text        NOT NULL CHECK (pg_catalog.length(unique_key) BETWEEN 1 AND 255),
  job_id     bigint,
  until      timestamptz NOT NULL,
  states     pgbus.job_state[] NOT NULL DEFAULT '{completed}',
  PRIMARY KEY (queue, unique_key)
);
-- The leader's expiry reads the oldest first.
CREATE INDEX unique_claim_until_idx ON pgbus.unique_claim (until);

-- A waiting job whose payload, run_at or priority a later enqueue replaced (replacing(...)) is
-- audited as 'replace' with the fields in detail; a debounce alone only moves run_at and is not.
-- Added NOT VALID as V46 did: every existing row holds an action the old check allowed.
ALTER TABLE pgbus.audit DROP CONSTRAINT audit_action_check;
ALTER TABLE pgbus.audit ADD CONSTRAINT audit_action_check
  CHECK (action IN ('cancel', 'replay', 'pause', 'resume', 'retry', 'delete',
                    'schedule_create', 'schedule_update', 'schedule_pause', 'schedule_resume',
                    'schedule_delete', 'schedule_trigger', 'limit', 'schedule_skip',
                    'reencrypt', 'replace')) NOT VALID;

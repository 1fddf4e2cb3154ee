-- pgbus schema V50 (issue #30, "fair share"): a queue may interleave its tenants (the jobs'
-- concurrency keys) instead of serving the oldest job first. See docs/schema.md, "Fair share".
--
-- Expand only. A build before V50 neither reads nor writes these columns, the table or the index:
-- its pgbus.queue_limit_set keeps the fair columns of a row as they are (R__flow.sql), and its
-- calls of pgbus.claim run the claim of this schema, which honours them.
--
-- pgbus.queue_limit.fair_key: NULL, a queue served oldest-first (as before), or 'concurrency_key':
-- the claim deals a priority level's due jobs over the concurrency keys that have some, weighted by
-- fair_weights ({"tenantA": 3}; a key not named weighs 1). fair_clock is the queue's virtual time
-- (pgbus.claim_fair, R__claim.sql). The table is one row per limited queue: checks inline.
ALTER TABLE pgbus.queue_limit
  ADD COLUMN fair_key text CONSTRAINT queue_limit_fair_key_chk CHECK (fair_key = 'concurrency_key'),
  ADD COLUMN fair_weights jsonb CONSTRAINT queue_limit_fair_weights_chk
    CHECK (jsonb_typeof(fair_weights) = 'object'),
  ADD COLUMN fair_clock double precision NOT NULL DEFAULT 0;

-- Each tenant's pass in a fair queue: the virtual time up to which it has been served. A row at or
-- below the queue's fair_clock says nothing (the claim reads such a tenant at the clock) and is
-- removed by the claim that passes it, so the table holds only tenants served ahead of the clock.
CREATE TABLE pgbus.queue_fair_pass (
  queue  pgbus.queue_name NOT NULL,
  tenant text NOT NULL,
  pass   double precision NOT NULL,
  PRIMARY KEY (queue, tenant)
);

-- A tenant's due jobs of a level in claim order, and the skip-scan over a queue's tenants
-- (pgbus.claim_fair). Partial on keyed waiting jobs: a job without a concurrency key, the common
-- case, enters no entry, so queues that use no keys pay nothing at enqueue or claim. Not
-- CONCURRENTLY (that waits on Flyway's own transaction); IF NOT EXISTS: an operator with a large
-- pgbus.job may build it by hand first with CREATE INDEX CONCURRENTLY and the same definition.
CREATE INDEX IF NOT EXISTS job_fair_idx ON pgbus.job (queue, concurrency_key, priority, run_at, id)
  WHERE concurrency_key IS NOT NULL AND state IN ('available', 'scheduled', 'retryable');

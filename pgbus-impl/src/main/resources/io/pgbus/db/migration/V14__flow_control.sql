-- pgbus schema V14: flow control across the fleet (issue #16). See docs/schema.md, "Flow control".
--   * pgbus.queue_limit: one row per limited queue, the limits every claim of the fleet obeys,
--     whatever each JVM's configuration says. Engines write the rows of the queues they serve at
--     start (pgbus.queue_limit_set); an enqueue with a concurrency key makes sure its queue has a
--     row (key limit 1 unless set otherwise).
--   * pgbus.job.concurrency_key: the key whose running jobs a key limit counts. NULL: none, and
--     an enqueue without one pays nothing.
--   * job_key_running_idx: the running jobs of each key, for the claim's count. Partial on a
--     key, so jobs without one (every job of an unlimited queue) never enter it.
--   * pgbus.enqueue, enqueue_job and enqueue_many take a trailing concurrency_key(s) DEFAULT
--     NULL; the old signatures go here and the new definitions are in R__enqueue.sql.
CREATE TABLE pgbus.queue_limit (
  queue              pgbus.queue_name PRIMARY KEY,
  -- At most this many of the queue's jobs running at once across the fleet; NULL: no limit.
  global_concurrency integer CONSTRAINT queue_limit_global_chk
                       CHECK (global_concurrency BETWEEN 1 AND 100000),
  -- At most this many running jobs per concurrency key; NULL: 1.
  key_concurrency    integer CONSTRAINT queue_limit_key_chk
                       CHECK (key_concurrency BETWEEN 1 AND 100000),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  updated_by         text
);

-- The longest concurrency key, as EnqueueOptions.MAX_CONCURRENCY_KEY_LENGTH in Java. NOT VALID:
-- every existing row has no key, so there is nothing to check, and no scan of the table.
ALTER TABLE pgbus.job ADD COLUMN concurrency_key text;
ALTER TABLE pgbus.job ADD CONSTRAINT job_concurrency_key_chk
  CHECK (pg_catalog.length(concurrency_key) BETWEEN 1 AND 255) NOT VALID;

CREATE INDEX job_key_running_idx ON pgbus.job (queue, concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;

DROP FUNCTION pgbus.enqueue(text, jsonb, timestamptz, integer, integer, text, text, text);
DROP FUNCTION pgbus.enqueue_job(text, jsonb, timestamptz, integer, integer, text, text, text);
DROP FUNCTION pgbus.enqueue_many(text[], jsonb[], timestamptz[], integer[], integer[], text[], text[], text[]);

-- pgbus schema V27 (issue #26, "no enqueuing commit takes PostgreSQL's NOTIFY lock in the common
-- case"): the SQL enqueue paths wake at commit, through a deferred trigger, and in the default
-- mode only when no wake for the queue went out a moment ago.
--
-- PostgreSQL takes one lock for the whole instance at the commit of every transaction that has
-- called NOTIFY and holds it through the commit's WAL flush, so every enqueuing commit used to
-- wait behind every other notifying commit of the instance (docs/architecture.md, "Wakes").
--
-- * pgbus.setting.wake_mode: pgbus.wake-mode as the SQL functions read it, written by the engine
--   at start under V26's newest-build-wins rule (PayloadLimit). 'coalesced' (the default): a
--   wake per queue and kind (now, later) at most every 2 ms, stamped in pgbus.wake_clock;
--   'in_transaction': a NOTIFY at every enqueuing commit, as pgbus 0.1.0 sent.
-- * pgbus.wake_clock: when the last wake per queue and kind went out. UNLOGGED: no WAL, and
--   empty after a crash, which only means "notify" (a missing row is a wake not sent lately).
--   Written only by the SECURITY DEFINER wake functions, so no application role needs a grant,
--   and none can hold a row locked to silence a queue's wakes.
-- * pgbus.job gets a deferred constraint trigger (AFTER INSERT), job_wake: the enqueue functions
--   no longer notify inline. Its WHEN, evaluated at the INSERT, lets through the first row per
--   queue and kind (pgbus.wake_first), so that of a batch of 10,000 rows one event per queue and
--   kind is queued for the commit.
--
-- The functions are created here because the trigger needs them; their current definitions are
-- in R__notify.sql. An expand migration: pgbus 0.1.0 neither reads nor writes the new column or
-- table, and its functions keep their signatures (its capsules lack the tail claim: see
-- docs/operations.md, "Upgrading").

ALTER TABLE pgbus.setting
  ADD COLUMN wake_mode text NOT NULL DEFAULT 'coalesced'
  CONSTRAINT setting_wake_mode_check CHECK (wake_mode IN ('coalesced', 'in_transaction'));
-- Until an engine of this build starts and writes its pgbus.wake-mode, the SQL path wakes as
-- pgbus 0.1.0 did: the capsules of 0.1.0 have no tail claim, and with the schema migrated ahead
-- of the rollout (pgbus.migrate=false) they alone would read the queues (docs/operations.md).
UPDATE pgbus.setting SET wake_mode = 'in_transaction';

CREATE UNLOGGED TABLE pgbus.wake_clock (
  queue   pgbus.queue_name NOT NULL,
  later   boolean          NOT NULL,  -- the kind: a job due now (false) or later (true)
  sent_at timestamptz      NOT NULL,
  PRIMARY KEY (queue, later)
) WITH (fillfactor = 50);  -- room for HOT updates: a row is stamped up to 500 times a second

REVOKE ALL ON pgbus.wake_clock FROM PUBLIC;

-- Placeholders for the trigger, unless R__notify.sql's definitions are there already (a schema
-- whose repeatable migrations ran ahead of this one).
DO $do$
BEGIN
  IF pg_catalog.to_regprocedure('pgbus.wake_first(text, timestamptz)') IS NULL THEN
    CREATE FUNCTION pgbus.wake_first(queue text, run_at timestamptz) RETURNS boolean
      LANGUAGE sql VOLATILE AS $$ SELECT true $$;
  END IF;
  IF pg_catalog.to_regprocedure('pgbus.job_wake()') IS NULL THEN
    CREATE FUNCTION pgbus.job_wake() RETURNS trigger
      LANGUAGE plpgsql VOLATILE SECURITY DEFINER
      SET search_path = pg_catalog, pgbus, pg_temp
      AS $$ BEGIN RETURN NULL; END $$;
  END IF;
END $do$;

-- The WHEN's first test is wake_first's own for a job due now, in plain expressions: the rows of
-- a batch after its first pay no PL/pgSQL call (a 10,000-row enqueue_many: measured in
-- docs/performance.md, "The SQL path's wake").
CREATE CONSTRAINT TRIGGER job_wake
  AFTER INSERT ON pgbus.job
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((NEW.run_at OPERATOR(pg_catalog.>) pg_catalog.now()
         OR pg_catalog.strpos(coalesce(pg_catalog.current_setting('pgbus.wake_queued', true), ''),
                              '/' OPERATOR(pg_catalog.||) NEW.queue::text
                                  OPERATOR(pg_catalog.||) ':n/') OPERATOR(pg_catalog.=) 0)
        AND pgbus.wake_first(NEW.queue::text, NEW.run_at))
  EXECUTE FUNCTION pgbus.job_wake();

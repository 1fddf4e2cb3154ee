-- Repeatable migration: the current definition of the wake-ups, pgbus.notify and pgbus.listen.
-- Flyway applies it after the versioned migrations and again whenever this file changes. See
-- docs/schema.md, "Where the schema lives" and "NOTIFY".

-- The wake-up hint for a queue. The payload is empty for a job that may run now, or the due time
-- in epoch milliseconds for a later one, so a sleeping worker can set its alarm without a query.
-- Rounded up (ceil): an alarm set to a floored time could ring up to 1 ms before run_at, and a
-- claim then would find nothing. Silent for a paused queue: no worker could claim its jobs, so
-- waking one would only cost an empty claim per enqueue; pgbus.resume sends the wake instead.
-- NOTIFY is transactional: it is delivered at commit and dropped on rollback, and identical
-- notifications in one transaction collapse into one.
--
-- PL/pgSQL, not SQL: called from PL/pgSQL, a SQL function cannot be inlined and would be parsed
-- and planned on every call (0.206 -> 0.124 ms per enqueue, V4). On the enqueue path, so
-- path-independent rather than pinned: numeric * numeric (1000.0) has an exact operator, numeric *
-- integer had not (extract returns numeric from PostgreSQL 14 on, double before: hence the cast).
CREATE OR REPLACE FUNCTION pgbus.notify(queue pgbus.queue_name, due timestamptz) RETURNS void
  LANGUAGE plpgsql VOLATILE
  AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = notify.queue::text) THEN
      PERFORM pg_catalog.pg_notify(
                pgbus.channel(notify.queue),
                CASE WHEN notify.due <= now() THEN ''
                     ELSE (pg_catalog.ceil(extract(epoch FROM notify.due)::numeric * 1000.0))::bigint::text END);
    END IF;
  END $$;

-- LISTENs on the given channels. LISTEN takes no bind parameter, so each channel is quoted with
-- format(%I) here rather than concatenated into SQL text by any client. format is VARIADIC
-- "any", so the path is pinned.
CREATE OR REPLACE FUNCTION pgbus.listen(channels text[]) RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE c text;
  BEGIN
    FOREACH c IN ARRAY channels LOOP
      EXECUTE pg_catalog.format('LISTEN %I', c);
    END LOOP;
  END $$;

-- The trigger function of the change triggers (V24): a row written to pgbus.queue_limit,
-- pgbus.queue_pause or (moved earlier, resumed, new) pgbus.schedule sends the trigger's channel,
-- TG_ARGV[0] ('pgbus-queues' or 'pgbus-schedule'), an empty notification at commit, so every
-- engine re-reads what changed within one wake instead of at its next poll ceiling: through the
-- SQL functions, the Java API, the console, or a plain UPDATE alike. The payload says nothing:
-- anyone may NOTIFY any channel, so engines treat one only as "re-read", rate-limited (Engine,
-- Maintainer). PostgreSQL folds the identical notifications of one transaction into one, so a
-- statement that writes many rows sends one.
--
-- Row-level, not statement-level: a statement-level trigger fires for a statement that wrote no
-- row too, and the enqueue of a keyed job runs INSERT ... ON CONFLICT DO NOTHING on its queue's
-- limit row every time (pgbus.check_concurrency_key); row-level, only the first one, the one that
-- inserts the row, notifies, and no enqueue after it pays anything. Off the hot path: pinned.
CREATE OR REPLACE FUNCTION pgbus.tell_engines() RETURNS trigger
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    PERFORM pg_catalog.pg_notify(TG_ARGV[0], '');
    RETURN NULL;
  END $$;

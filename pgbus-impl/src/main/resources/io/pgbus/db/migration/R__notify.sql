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

-- ---------------------------------------------------------------------------------------------
-- The wake at commit (V27, issue #26; docs/architecture.md, "Wakes", "The SQL path")
-- ---------------------------------------------------------------------------------------------
--
-- An enqueue no longer calls NOTIFY: PostgreSQL takes one lock for the whole instance at the
-- commit of every transaction that did, and holds it through the commit's WAL flush, so enqueuing
-- commits queued behind each other. pgbus.job's deferred trigger job_wake sends the wake at commit
-- instead: in pgbus.setting.wake_mode 'in_transaction' the NOTIFY pgbus 0.1.0 sent (pgbus.notify);
-- in 'coalesced', the default, only when no wake for the queue and kind went out in the last
-- 2 ms and none is being sent right now (pgbus.wake_coalesced); never when the transaction set
-- pgbus.wake to 'client' (the Java API, which wakes after its commit itself).

-- The trigger's WHEN (V48), at each INSERT into pgbus.job: true for the first row of a queue and
-- kind (due now; due later) in the transaction, and for a later row of a queue due earlier than
-- any before it, so that a batch of 10,000 rows queues one event per queue and kind for the commit,
-- not 10,000. Remembered in the transaction-local setting pgbus.wake_queued, '/<queue>:n/' for
-- now and '/<queue>:l<due ms>/' for later (a queue name has neither '/' nor ':'); a savepoint
-- rolled back takes back its rows, their events and these settings together.
--
-- pgbus.wake_now holds the queue of the last row due now that came here: the WHEN's plain test
-- (NEW.run_at > now() OR that setting IS DISTINCT FROM NEW.queue) lets a batch's later rows of the
-- same queue by without a PL/pgSQL call, and is short because PostgreSQL reads, plans and compiles
-- the whole WHEN again at every statement (a single enqueue paid ~50,000 instructions more for
-- V27's longer test: docs/performance.md, "The wake's cost"). Rows of queues interleaved in one
-- batch call here at each change of queue and get false from the memo above.
--
-- false at once when the transaction set pgbus.wake to 'client' (the Java API, which wakes after
-- its commit itself): no event is queued, so the commit fires no trigger (job_wake still checks,
-- for the events queued before the setting).
--
-- Per row, on the enqueue path: path-independent (see R__enqueue.sql's header), assignments
-- rather than PERFORM so that each statement is a simple expression.
CREATE OR REPLACE FUNCTION pgbus.wake_first(queue text, run_at timestamptz) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_seen text;
    v_key  text;
    v_at   integer;
    v_due  text;
    v_old  text;
  BEGIN
    IF pg_catalog.current_setting('pgbus.wake', true) = 'client' THEN
      v_seen := pg_catalog.set_config('pgbus.wake_now', wake_first.queue, true);
      RETURN false;
    END IF;
    v_seen := coalesce(pg_catalog.current_setting('pgbus.wake_queued', true), '');
    IF wake_first.run_at <= now() THEN
      v_key := '/' || wake_first.queue || ':n/';
      IF pg_catalog.strpos(v_seen, v_key) = 0 THEN
        v_seen := pg_catalog.set_config('pgbus.wake_queued', v_seen || v_key, true);
        v_seen := pg_catalog.set_config('pgbus.wake_now', wake_first.queue, true);
        RETURN true;
      END IF;
      v_seen := pg_catalog.set_config('pgbus.wake_now', wake_first.queue, true);
      RETURN false;
    END IF;
    IF NOT pg_catalog.isfinite(wake_first.run_at) THEN
      RETURN false;  -- never due: no wake (and no hint: infinity has no epoch milliseconds)
    END IF;
    v_due := pgbus.due_hint(wake_first.run_at);
    v_key := '/' || wake_first.queue || ':l';
    v_at := pg_catalog.strpos(v_seen, v_key);
    IF v_at = 0 THEN
      v_seen := pg_catalog.set_config('pgbus.wake_queued', v_seen || v_key || v_due || '/', true);
      RETURN true;
    END IF;
    v_old := pg_catalog.split_part(pg_catalog.substr(v_seen, v_at + pg_catalog.length(v_key)), '/', 1);
    IF v_due::bigint >= v_old::bigint THEN
      RETURN false;
    END IF;
    v_seen := pg_catalog.set_config('pgbus.wake_queued',
                pg_catalog.replace(v_seen, v_key || v_old || '/', v_key || v_due || '/'), true);
    RETURN true;
  END $$;

-- A later job's NOTIFY payload: its due time in epoch milliseconds, rounded up (see pgbus.notify).
-- On the enqueue path: path-independent.
CREATE OR REPLACE FUNCTION pgbus.due_hint(due timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $$ SELECT (pg_catalog.ceil(extract(epoch FROM due)::numeric * 1000.0))::bigint::text $$;

-- The deferred trigger: fires at commit (or at PREPARE TRANSACTION, where NOTIFY is refused: see
-- docs/architecture.md) for the rows wake_first let through. Of a queue's later rows only the one
-- with the transaction's earliest due time sends, so the alarm it sets is the earliest.
--
-- In the default mode most commits send nothing: a wake for the queue and kind went out less than
-- 2 ms ago. One statement reads the mode and takes the clock row (FOR UPDATE SKIP LOCKED), and the
-- trigger decides on what it got: pgbus.wake_coalesced's rules, without its second read and call
-- (V48: about 55,000 instructions less on a commit that sends, 70,000 on one that does not, than
-- main before it). A row not got (missing, or locked: being sent right now) goes to
-- pgbus.wake_coalesced, which tells the two apart.
--
-- SECURITY DEFINER, so that the stamp in pgbus.wake_clock needs no grant: any role that may
-- insert a job may wake its queue, and none may write the clock directly. Once per queue and
-- kind per commit, off the per-row path: pinned.
CREATE OR REPLACE FUNCTION pgbus.job_wake() RETURNS trigger
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_seen text;
    v_key  text;
    v_at   integer;
    v_mode text;
    v_sent timestamptz;
    v_got  boolean;
    v_now  timestamptz;
  BEGIN
    IF current_setting('pgbus.wake', true) = 'client' THEN
      RETURN NULL;  -- the Java API wakes after its commit itself
    END IF;
    IF NEW.run_at > now() THEN
      v_seen := coalesce(current_setting('pgbus.wake_queued', true), '');
      v_key := '/' || NEW.queue::text || ':l';
      v_at := strpos(v_seen, v_key);
      IF v_at > 0 AND split_part(substr(v_seen, v_at + length(v_key)), '/', 1)
                      <> pgbus.due_hint(NEW.run_at) THEN
        RETURN NULL;  -- a row of this transaction is due earlier: its event sends
      END IF;
    END IF;
    SELECT s.wake_mode, c.sent_at, c.queue IS NOT NULL INTO v_mode, v_sent, v_got
      FROM pgbus.setting s
      LEFT JOIN LATERAL (SELECT k.sent_at, k.queue FROM pgbus.wake_clock k
                          WHERE k.queue = NEW.queue AND k.later = (NEW.run_at > now())
                            FOR UPDATE SKIP LOCKED) c ON true;
    v_now := clock_timestamp();
    IF v_mode = 'in_transaction' THEN
      PERFORM pgbus.notify(NEW.queue, NEW.run_at);
    ELSIF NOT coalesce(v_got, false) THEN
      PERFORM pgbus.wake_coalesced(NEW.queue, NEW.run_at);
    ELSIF v_sent > v_now - interval '2 milliseconds' AND v_sent <= v_now THEN
      RETURN NULL;  -- a wake just went out (the window of pgbus.wake_coalesced)
    ELSE
      UPDATE pgbus.wake_clock c SET sent_at = v_now
       WHERE c.queue = NEW.queue AND c.later = (NEW.run_at > now());
      PERFORM pgbus.notify(NEW.queue, NEW.run_at);
    END IF;
    RETURN NULL;
  END $$;

-- Sends the wake for a queue and kind (due now, or later with the due time as payload) unless one
-- went out in the last 2 ms or is being sent right now, and says whether it sent. The window is
-- the coalescing window of docs/architecture.md, "The SQL path"; the capsules' tail claim
-- (ClaimReasons.TAIL) comes after it, with a margin, and finds the jobs whose wake was skipped.
--
-- The clock's row is read with FOR UPDATE SKIP LOCKED, so no writer waits on another: a row
-- locked is a wake another transaction stamped and is committing now (its NOTIFY goes out at
-- that commit); a row stamped within the window is a wake just sent; both make this one
-- redundant. A missing row (the table is UNLOGGED: empty after a crash) is a wake not sent
-- lately; the transaction that inserts it sends, and one that meets its insert uncommitted waits
-- for that commit (ON CONFLICT), once per queue and kind after a crash. A stamp in the future
-- (the clock set back) counts as old.
-- The caller must end its transaction soon: the row stays locked until then (SQL callers: the
-- trigger at commit, pgbus.wake in a transaction of its own).
CREATE OR REPLACE FUNCTION pgbus.wake_coalesced(queue pgbus.queue_name, due timestamptz)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    v_later boolean := wake_coalesced.due > now();
    v_now   timestamptz := clock_timestamp();
    v_sent  timestamptz;
  BEGIN
    SELECT c.sent_at INTO v_sent
      FROM pgbus.wake_clock c
     WHERE c.queue = wake_coalesced.queue AND c.later = v_later
       FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
      IF EXISTS (SELECT 1 FROM pgbus.wake_clock c
                  WHERE c.queue = wake_coalesced.queue AND c.later = v_later) THEN
        RETURN false;  -- locked: being sent right now
      END IF;
      INSERT INTO pgbus.wake_clock AS c (queue, later, sent_at)
      VALUES (wake_coalesced.queue, v_later, v_now)
      ON CONFLICT (queue, later) DO NOTHING;
      IF NOT FOUND THEN
        RETURN false;  -- another transaction made the row just now, and sends
      END IF;
    ELSIF v_sent > v_now - interval '2 milliseconds' AND v_sent <= v_now THEN
      RETURN false;
    ELSE
      UPDATE pgbus.wake_clock c SET sent_at = v_now
       WHERE c.queue = wake_coalesced.queue AND c.later = v_later;
    END IF;
    PERFORM pgbus.notify(wake_coalesced.queue, wake_coalesced.due);
    RETURN true;
  END $$;

-- A debounced wake any sender may call, in a transaction of its own (autocommit): the queues'
-- wakes through the same clock as the trigger's, one per queue and kind (NULL due, or a NULL
-- dues array: now; else the earliest due time given for the queue). Returns how many it sent.
-- Bounds: at most 10000 queues (the batch limit), dues as long as queues, each due within the
-- schedule horizon (pgbus.check_run_at). EXECUTE is not granted to PUBLIC: a role that calls it
-- and keeps its transaction open holds the queue's clock row, and every other wake of the queue
-- is skipped until it commits (docs/operations.md: the application role is granted EXECUTE).
CREATE OR REPLACE FUNCTION pgbus.wake(queues text[], dues timestamptz[] DEFAULT NULL)
  RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_n    integer := coalesce(cardinality(queues), 0);
    v_sent integer := 0;
    w      record;
  BEGIN
    IF v_n > 10000 THEN
      RAISE EXCEPTION 'pgbus: a wake for % queues is over the limit of 10000 per pgbus.wake: split it', v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF dues IS NOT NULL AND cardinality(dues) <> v_n THEN
      RAISE EXCEPTION 'pgbus: pgbus.wake got % queues and % due times: pass one due time per queue, or NULL for all due now',
        v_n, cardinality(dues)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pgbus.check_run_at(t.q, t.d)
       FROM unnest(queues, dues) AS t(q, d)
      WHERE NOT isfinite(t.d) OR t.d > now() + interval '36500 days';
    FOR w IN
      SELECT pgbus.queue(t.q) AS queue, min(coalesce(t.d, now())) AS due
        FROM unnest(queues, dues) AS t(q, d)
       GROUP BY t.q, coalesce(t.d, now()) > now()
    LOOP
      IF pgbus.wake_coalesced(w.queue, w.due) THEN
        v_sent := v_sent + 1;
      END IF;
    END LOOP;
    RETURN v_sent;
  END $$;

REVOKE EXECUTE ON FUNCTION pgbus.wake(text[], timestamptz[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION pgbus.wake_coalesced(pgbus.queue_name, timestamptz) FROM PUBLIC;

-- pgbus schema V5: hardening (issue #10). See docs/schema.md.
--   * no pgbus function resolves a name through the caller's search_path;
--   * the payload limit (pgbus.max-payload-bytes) holds in SQL too, at enqueue and at claim;
--   * run_at has an upper bound (100 years from now) and must be finite.
-- V1..V4 are applied in deployed databases and are never edited: what changes is replaced here.

-- ---------------------------------------------------------------------------------------------
-- search_path
-- ---------------------------------------------------------------------------------------------
--
-- A function without its own search_path resolves names with the caller's, and applications
-- connect with "$user", public. pg_catalog is searched first, but only an exact match of argument
-- types there wins: a polymorphic (array_position, unnest, array_length), VARIADIC "any"
-- (format, jsonb_build_object) or implicitly cast (bigint * interval, numeric * integer, a
-- varchar argument) call is resolved among all candidates, and a look-alike in public with the
-- exact argument types wins. On PostgreSQL 14 and older anyone may create one in public, and it
-- then runs with the rights of whoever called pgbus.
--
-- Two ways out, chosen per function:
--   * Off the hot path, the function pins its path: SET search_path = pg_catalog, pgbus,
--     pg_temp (pg_temp last, so a temporary object cannot shadow anything either).
--   * On the enqueue path (pgbus.enqueue, enqueue_job, enqueue_many, queue, notify, channel,
--     check_payload, check_run_at), a pinned path costs every call a save and restore of the
--     setting and, where pinned and unpinned functions call each other, replanning. Measured
--     with pgbench on SELECT pgbus.enqueue(...): see docs/schema.md. These functions are written
--     instead so that nothing in them depends on the path: every function call that pg_catalog
--     may not match exactly is qualified with pg_catalog. (now(), min(timestamptz), count(*) and
--     the keyword coalesce need not be), every operator has operands of exactly the types of a
--     pg_catalog operator, and comparisons on the job_state enum are written
--     OPERATOR(pg_catalog.=) (an enum has no exact operator: pg_catalog's is anyenum = anyenum).
--     A pgbus type (queue_name, job_state) can only be named by a role with USAGE on schema
--     pgbus, but a queue_name is still compared as ::text, so that even such a role finds nothing
--     to shadow.
-- The test SearchPathHijackTest keeps both promises: it plants look-alikes for every call pgbus
-- makes and runs the whole lifecycle; every function not on the list above must pin its path.

-- The queue name check of V1, path-independent.
CREATE OR REPLACE FUNCTION pgbus.queue(name text) RETURNS pgbus.queue_name
  LANGUAGE plpgsql IMMUTABLE
  AS $$
  BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]*$' OR pg_catalog.length(name) > 48 THEN
      RAISE EXCEPTION 'pgbus: invalid queue name %: use a lower-case letter followed by lower-case letters, digits or _, at most 48 characters', pg_catalog.quote_nullable(name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN name::pgbus.queue_name;
  END $$;

-- The channel of V1, path-independent: text || text has an exact operator in pg_catalog.
CREATE OR REPLACE FUNCTION pgbus.channel(queue pgbus.queue_name) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT 'pgbus_' || queue::text $$;

-- The wake-up hint of V4, path-independent: numeric * numeric (1000.0) has an exact operator,
-- numeric * integer had not (extract returns numeric from PostgreSQL 14 on, double before: hence
-- the cast).
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

-- LISTEN takes no bind parameter; format(%I) quotes each channel. format is VARIADIC "any".
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

ALTER FUNCTION pgbus.pause(text, text) SET search_path = pg_catalog, pgbus, pg_temp;
ALTER FUNCTION pgbus.resume(text) SET search_path = pg_catalog, pgbus, pg_temp;
-- pgbus.enqueue (V4) only calls pgbus.enqueue_job by its qualified name with its own typed
-- parameters: nothing in it depends on the path, and it stays unpinned like the function it calls.

-- ---------------------------------------------------------------------------------------------
-- Settings the SQL functions need from the engine's configuration
-- ---------------------------------------------------------------------------------------------

-- One row. The engine writes its pgbus.max-payload-bytes here at start (and logs a change), so
-- SQL enqueues and claims apply the limit the Java API applies. With several JVMs, the last one to
-- start wins: keep their configuration equal. 1 MiB is the engine's default.
CREATE TABLE pgbus.setting (
  id                boolean PRIMARY KEY DEFAULT true CHECK (id),  -- at most one row
  max_payload_bytes integer NOT NULL DEFAULT 1048576 CHECK (max_payload_bytes > 0),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  updated_by        text                                           -- worker id or SQL user
);
INSERT INTO pgbus.setting (updated_by) VALUES ('V5__hardening.sql');
-- Every role that enqueues or claims reads it (the functions run with the caller's rights), and
-- a limit is no secret: an application role granted only the tables of V1..V3 keeps working.
-- Writing it (the engine, at start) needs UPDATE, granted by the owner; see docs/operations.md.
GRANT SELECT ON pgbus.setting TO PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- Enqueue: payload limit and run_at bound
-- ---------------------------------------------------------------------------------------------
--
-- run_at may be at most 100 years (interval '36500 days') after now(), and must be finite. Beyond
-- that, epoch milliseconds overflow in the engine's alarms, and 'infinity' used to fail with
-- "cannot convert infinity to bigint" deep inside pgbus.notify. Java bounds delays with the same
-- constant (EnqueueOptions.MAX_SCHEDULE_AHEAD). Existing rows are left as they are: no CHECK on
-- the table, whose bound would move with now() anyway.

CREATE FUNCTION pgbus.check_run_at(queue text, run_at timestamptz) RETURNS void
  LANGUAGE plpgsql STABLE
  AS $$
  BEGIN
    IF NOT pg_catalog.isfinite(check_run_at.run_at) THEN
      RAISE EXCEPTION 'pgbus: run_at must be a finite time, not % (queue %): pass NULL for now, or a time at most 100 years ahead',
        check_run_at.run_at, check_run_at.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF check_run_at.run_at > now() + interval '36500 days' THEN
      RAISE EXCEPTION 'pgbus: run_at % is more than 100 years (interval ''36500 days'') ahead (queue %): schedule it nearer, or keep the date in your own table and enqueue the job later',
        check_run_at.run_at, check_run_at.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
  END $$;

-- Refuses a payload over pgbus.setting.max_payload_bytes, counted in bytes of its JSON text (the
-- text a claim hands to Java), with the message of the Java API. The common case never renders
-- the text: a jsonb value's JSON text is at most 6 times its binary size (a control character,
-- 1 byte, is written \u0001), so a payload of a sixth of the limit or less cannot be over it.
CREATE FUNCTION pgbus.check_payload(queue text, payload jsonb) RETURNS void
  LANGUAGE plpgsql STABLE
  AS $$
  DECLARE
    -- The row is there from V5 on; the default stands in should someone delete it.
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    v_bytes integer;
  BEGIN
    IF pg_catalog.pg_column_size(check_payload.payload) > v_limit / 6 THEN
      v_bytes := pg_catalog.octet_length(check_payload.payload::text);
      IF v_bytes > v_limit THEN
        RAISE EXCEPTION 'payload for queue ''%'' is % bytes, over the limit of % bytes: store large data in your own table and enqueue its key, or raise pgbus.max-payload-bytes',
          check_payload.queue, v_bytes, v_limit
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END IF;
  END $$;

-- The enqueue of V3, with the payload limit and the run_at bound, path-independent.
CREATE OR REPLACE FUNCTION pgbus.enqueue_job(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25,
    unique_key   text        DEFAULT NULL,
    OUT id        bigint,
    OUT duplicate boolean)
  LANGUAGE plpgsql VOLATILE
  AS $$
  -- Columns win over the parameters of the same name (queue, unique_key in ON CONFLICT);
  -- parameters are always written enqueue_job.<name>.
  #variable_conflict use_column
  DECLARE
    v_queue  pgbus.queue_name := pgbus.queue(enqueue_job.queue);
    v_run_at timestamptz := coalesce(enqueue_job.run_at, now());
    v_state  pgbus.job_state :=
      CASE WHEN coalesce(enqueue_job.run_at, now()) <= now() THEN 'available' ELSE 'scheduled' END;
  BEGIN
    IF enqueue_job.payload IS NULL OR pg_catalog.jsonb_typeof(enqueue_job.payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: payload must not be null (queue %); use ''{}'' for an empty payload', enqueue_job.queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM pgbus.check_payload(v_queue, enqueue_job.payload);
    PERFORM pgbus.check_run_at(v_queue, v_run_at);
    IF enqueue_job.unique_key IS NOT NULL
       AND (pg_catalog.btrim(enqueue_job.unique_key) = ''
            OR pg_catalog.length(enqueue_job.unique_key) > 255) THEN
      RAISE EXCEPTION 'pgbus: invalid unique key % (queue %): use 1 to 255 characters, not only blanks, or NULL for no key',
        pg_catalog.quote_literal(pg_catalog.left(enqueue_job.unique_key, 80)), enqueue_job.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOOP
      -- The inference predicate is job_unique_idx's, word for word but for the operator, which
      -- is the one the index was built with (enum_eq), named so that no look-alike can stand in.
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at, unique_key)
      VALUES (v_queue, v_state, enqueue_job.priority, enqueue_job.payload,
              enqueue_job.max_attempts, v_run_at, enqueue_job.unique_key)
      ON CONFLICT (queue, unique_key)
        WHERE unique_key IS NOT NULL
          AND state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}')
        DO NOTHING
      RETURNING j.id INTO id;
      IF FOUND THEN
        duplicate := false;
        PERFORM pgbus.notify(v_queue, v_run_at);
        RETURN;
      END IF;
      -- Only a keyed job can conflict, so here unique_key is set.
      SELECT j.id INTO id
        FROM pgbus.job j
       WHERE j.queue::text = v_queue::text AND j.unique_key = enqueue_job.unique_key
         AND j.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}');
      IF FOUND THEN
        duplicate := true;
        RETURN;
      END IF;
    END LOOP;
  END $$;

-- The batch enqueue of V3, with the payload limit and the run_at bound, path-independent.
-- A multi-argument unnest in FROM is expanded by the parser into pg_catalog.unnest calls, one per
-- array, so it needs no qualifying (and cannot take one).
CREATE OR REPLACE FUNCTION pgbus.enqueue_many(
    queues       text[],
    payloads     jsonb[],
    run_ats      timestamptz[],
    priorities   integer[],
    max_attempts integer[],
    unique_keys  text[] DEFAULT NULL)
  RETURNS SETOF bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_null integer := coalesce(pg_catalog.array_position(payloads, NULL),
                               pg_catalog.array_position(payloads, 'null'::jsonb));
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
  BEGIN
    IF v_null IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload', v_null
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Checked for the whole batch before anything is written. The filters only spare the call
    -- (and its read of pgbus.setting) for the jobs that cannot fail it; the checks raise. The
    -- unique-key path below checks each job again in pgbus.enqueue_job.
    PERFORM pgbus.check_payload(t.q, t.p)
       FROM unnest(queues, payloads) AS t(q, p)
      WHERE pg_catalog.pg_column_size(t.p) > v_limit / 6;
    PERFORM pgbus.check_run_at(t.q, t.r)
       FROM unnest(queues, run_ats) AS t(q, r)
      WHERE NOT pg_catalog.isfinite(t.r) OR t.r > now() + interval '36500 days';
    IF unique_keys IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.unnest(unique_keys) k WHERE k IS NOT NULL) THEN
      FOR i IN 1 .. coalesce(pg_catalog.array_length(queues, 1), 0) LOOP
        RETURN NEXT (SELECT e.id
                       FROM pgbus.enqueue_job(queues[i], payloads[i], run_ats[i], priorities[i],
                                              max_attempts[i], unique_keys[i]) e);
      END LOOP;
      RETURN;
    END IF;
    RETURN QUERY
      WITH input AS (
        SELECT pgbus.queue(t.q) AS queue, t.p AS payload, coalesce(t.r, now()) AS run_at,
               t.pr AS priority, t.m AS max_attempts, t.ord
          FROM unnest(queues, payloads, run_ats, priorities, max_attempts)
               WITH ORDINALITY AS t(q, p, r, pr, m, ord)
      ), inserted AS (
        INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, run_at)
        SELECT i.queue,
               CASE WHEN i.run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
               i.priority, i.payload, i.max_attempts, i.run_at
          FROM input i
         ORDER BY i.ord
        RETURNING id
      ), notified AS (
        SELECT pgbus.notify(n.queue, min(n.run_at))
          FROM input n
         GROUP BY n.queue, n.run_at <= now()
      )
      -- Identity values are assigned in insert order, which follows ORDER BY i.ord above.
      SELECT id FROM inserted, (SELECT count(*) FROM notified) force_notify ORDER BY id;
  END $$;

-- ---------------------------------------------------------------------------------------------
-- Claim: an oversized payload is never handed out
-- ---------------------------------------------------------------------------------------------

-- The claim of V3 (strict queue order, paused queues skipped; see there for its shape), with one
-- change: a job whose payload is over the limit (inserted before V5, by a plain INSERT, or before
-- the limit was lowered) is not returned. It goes to dead with an error that names its size and
-- the limit, in the statement that would have claimed it, so its payload never leaves the
-- database; a replay after raising the limit revives it. Its slot is given to the next job of the
-- same queue (the inner loop), so strict queue order holds.
--
-- The size check costs nothing for small payloads: only a payload whose stored size exceeds the
-- limit / 1536 has its JSON text measured. 1536 = 6 (JSON text vs binary, see pgbus.check_payload)
-- x 256 (the best ratio of pglz or lz4 compression, which pg_column_size sees through).
CREATE OR REPLACE FUNCTION pgbus.claim(
    queues   text[],
    max_jobs integer,
    worker   text,
    lease    interval)
  RETURNS SETOF pgbus.job
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    q text;
    remaining integer := max_jobs;
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    buried integer;
    r record;
  BEGIN
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      LOOP
        buried := 0;
        FOR r IN
          WITH picked AS (
            SELECT c.id,
                   CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                        THEN octet_length(c.payload::text) END AS bytes
              FROM pgbus.job c
             WHERE c.queue = q
               AND c.state IN ('available', 'scheduled', 'retryable')
               AND c.run_at <= now()
             ORDER BY c.priority, c.run_at, c.id
             LIMIT remaining
             FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE pgbus.job j
               SET state = CASE WHEN p.bytes > v_limit THEN 'dead' ELSE 'running' END::job_state,
                   attempt = j.attempt + 1,
                   attempted_at = now(),
                   attempted_by = worker,
                   lease_expires_at = CASE WHEN p.bytes > v_limit THEN NULL ELSE now() + lease END,
                   finalized_at = CASE WHEN p.bytes > v_limit THEN now() END,
                   errors = CASE WHEN p.bytes > v_limit
                     THEN jsonb_path_query_array(
                            jsonb_build_array(jsonb_build_object(
                              'attempt', j.attempt + 1, 'at', now(),
                              'error', format('payload for queue ''%s'' is %s bytes, over the limit of %s bytes:'
                                              ' not claimed; store large data in your own table and enqueue'
                                              ' its key, or raise pgbus.max-payload-bytes and replay the job',
                                              j.queue, p.bytes, v_limit)))
                              || j.errors,
                            '$[0 to 9]')
                     ELSE j.errors END
              FROM picked p
             WHERE j.id = p.id
            RETURNING j, p.bytes > v_limit AS oversized)
          SELECT c.j AS job, coalesce(c.oversized, false) AS oversized
            FROM claimed c
           ORDER BY (c.j).priority, (c.j).run_at, (c.j).id
        LOOP
          IF r.oversized THEN
            buried := buried + 1;
          ELSE
            remaining := remaining - 1;
            RETURN NEXT r.job;
          END IF;
        END LOOP;
        EXIT WHEN buried = 0 OR remaining <= 0;
      END LOOP;
    END LOOP;
  END $$;

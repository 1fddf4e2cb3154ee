-- Repeatable migration: the current definition of the enqueue functions, pgbus.enqueue_job,
-- pgbus.enqueue and pgbus.enqueue_many. Flyway applies it after the versioned migrations and again
-- whenever this file changes. See docs/schema.md, "Functions" and "Unique jobs".
--
-- A new parameter changes a signature, which CREATE OR REPLACE cannot do: the versioned migration
-- that adds one drops the old function first (as V3 and V6 did), and the new definition goes here.
--
-- search_path: a function without its own search_path resolves names with the caller's, and
-- applications connect with "$user", public. pg_catalog is searched first, but only an exact
-- match of argument types there wins: a polymorphic (array_position, unnest, array_length),
-- VARIADIC "any" (format, jsonb_build_object) or implicitly cast call is resolved among all
-- candidates, and a look-alike in public with the exact argument types wins. Off the hot path a
-- function pins its path (SET search_path = pg_catalog, pgbus, pg_temp). The enqueue path
-- (these functions, queue, channel, notify, wake_first and the checks) is instead written so that nothing in
-- it depends on the path, because a pinned path costs every call a save and restore of the
-- setting, and replanning where pinned and unpinned functions call each other (measured: see
-- docs/schema.md, V5): every call that pg_catalog may not match exactly is qualified with
-- pg_catalog. (now(), min(timestamptz), count(*) and the keyword coalesce need not be), every
-- operator has operands of exactly the types of a pg_catalog operator, comparisons on the
-- job_state enum are written OPERATOR(pg_catalog.=), and a queue_name is compared as ::text.
-- SearchPathHijackTest plants look-alikes for every call and fails on any hit.

-- Enqueues one job and says whether it was new. With a unique_key, a job with the same key that
-- is still waiting or running wins: nothing is inserted, no wake is sent, and its id
-- comes back with duplicate = true. No error is raised, so the caller's transaction goes on.
--
-- Why INSERT ... ON CONFLICT DO NOTHING and not a check first: a SELECT-then-INSERT lets two
-- transactions both see no job and both insert. With ON CONFLICT, the second waits on the
-- first's uncommitted row: if the first commits, the second does nothing and then reads the
-- committed id (READ COMMITTED: each statement here takes a fresh snapshot); if it rolls back,
-- the second inserts. The loop covers the holder finishing between those two statements.
--
-- The wake: pgbus.job's deferred trigger job_wake (V27, R__notify.sql) sends it at the caller's
-- commit, so nothing here takes PostgreSQL's NOTIFY lock (docs/architecture.md, "Wakes").
CREATE OR REPLACE FUNCTION pgbus.enqueue_job(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25,
    unique_key   text        DEFAULT NULL,
    trace_parent text        DEFAULT NULL,
    trace_state  text        DEFAULT NULL,
    concurrency_key text     DEFAULT NULL,
    OUT id        bigint,
    OUT duplicate boolean)
  LANGUAGE plpgsql VOLATILE
  AS $$
  -- Columns win over the parameters of the same name (queue, unique_key in ON CONFLICT);
  -- parameters are always written enqueue_job.<name>.
  --
  -- Shape (issue #15, docs/performance.md "Enqueue at the raw ceiling"): one SQL statement per
  -- call, the INSERT, which returns the payload limit and the queue's pause with the id. Every check
  -- is a PL/pgSQL simple expression, evaluated without the executor; the functions that raise
  -- (pgbus.queue, check_payload, check_run_at) are called only when their cheap test trips, so
  -- the messages stay theirs. The wake-up is no longer here: the deferred trigger job_wake (V27,
  -- R__notify.sql) sends it at commit, and in the default mode only now and then.
  #variable_conflict use_column
  DECLARE
    v_queue  pgbus.queue_name;
    v_run_at timestamptz := coalesce(enqueue_job.run_at, now());
    v_limit  integer;
  BEGIN
    -- pgbus.queue's rule; it raises the message.
    IF enqueue_job.queue IS NULL OR enqueue_job.queue !~ '^[a-z][a-z0-9_]*$'
       OR pg_catalog.length(enqueue_job.queue) > 48 THEN
      PERFORM pgbus.queue(enqueue_job.queue);
    END IF;
    v_queue := enqueue_job.queue;
    IF enqueue_job.payload IS NULL OR pg_catalog.jsonb_typeof(enqueue_job.payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: payload must not be null (queue %); use ''{}'' for an empty payload', enqueue_job.queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- pgbus.check_run_at's tests; it raises the message.
    IF NOT pg_catalog.isfinite(v_run_at) OR v_run_at > now() + interval '36500 days' THEN
      PERFORM pgbus.check_run_at(v_queue, v_run_at);
    END IF;
    IF enqueue_job.trace_parent IS NOT NULL OR enqueue_job.trace_state IS NOT NULL THEN
      PERFORM pgbus.check_trace(v_queue, enqueue_job.trace_parent, enqueue_job.trace_state);
    END IF;
    IF enqueue_job.unique_key IS NOT NULL
       AND (pg_catalog.btrim(enqueue_job.unique_key) = ''
            OR pg_catalog.length(enqueue_job.unique_key) > 255) THEN
      RAISE EXCEPTION 'pgbus: invalid unique key % (queue %): use 1 to 255 characters, not only blanks, or NULL for no key',
        pg_catalog.quote_literal(pg_catalog.left(enqueue_job.unique_key, 80)), enqueue_job.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF enqueue_job.concurrency_key IS NOT NULL THEN
      PERFORM pgbus.check_concurrency_key(v_queue, enqueue_job.concurrency_key);
    END IF;
    IF enqueue_job.unique_key IS NULL THEN
      -- No key, no conflict possible: a plain INSERT, without ON CONFLICT's speculative insertion.
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at,
                                  trace_parent, trace_state, concurrency_key)
      VALUES (v_queue,
              CASE WHEN v_run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
              enqueue_job.priority, enqueue_job.payload, enqueue_job.max_attempts, v_run_at,
              enqueue_job.trace_parent, enqueue_job.trace_state, enqueue_job.concurrency_key)
      -- The limit as pgbus.check_payload reads it (the default stands in should the row be
      -- gone) comes back with the row: one statement in all. 0 for a queue that encrypts (V53):
      -- then the test below always calls the checks, and check_payload reads the limit itself.
      -- Negative (-1 - the limit) for a queue with a max-wait (V57): see below.
      RETURNING j.id, coalesce((SELECT CASE WHEN v_queue::text = ANY (s.max_wait_queues)
                                            THEN -1 ELSE 1 END
                                       * CASE WHEN v_queue::text = ANY (s.encrypted_queues) THEN 0
                                              ELSE s.max_payload_bytes END
                                       - CASE WHEN v_queue::text = ANY (s.max_wait_queues)
                                              THEN 1 ELSE 0 END
                                  FROM pgbus.setting s), 1048576)
        INTO id, v_limit;
    ELSE
      LOOP
        -- The inference predicate is job_unique_idx's, word for word but for the operator, which
        -- is the one the index was built with (enum_eq), named so that no look-alike can stand in.
        INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at,
                                    unique_key, trace_parent, trace_state, concurrency_key)
        VALUES (v_queue,
                CASE WHEN v_run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
                enqueue_job.priority, enqueue_job.payload, enqueue_job.max_attempts, v_run_at,
                enqueue_job.unique_key, enqueue_job.trace_parent, enqueue_job.trace_state,
                enqueue_job.concurrency_key)
        ON CONFLICT (queue, unique_key)
          WHERE unique_key IS NOT NULL
            AND state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}')
          DO NOTHING
        RETURNING j.id, coalesce((SELECT CASE WHEN v_queue::text = ANY (s.max_wait_queues)
                                              THEN -1 ELSE 1 END
                                         * CASE WHEN v_queue::text = ANY (s.encrypted_queues)
                                                THEN 0 ELSE s.max_payload_bytes END
                                         - CASE WHEN v_queue::text = ANY (s.max_wait_queues)
                                                THEN 1 ELSE 0 END
                                    FROM pgbus.setting s), 1048576)
          INTO id, v_limit;
        EXIT WHEN FOUND;
        -- Only a keyed job can conflict, so here unique_key is set.
        SELECT j.id INTO id
          FROM pgbus.job j
         WHERE j.queue::text = v_queue::text AND j.unique_key::text = enqueue_job.unique_key::text
           AND j.state OPERATOR(pg_catalog.=) ANY ('{scheduled,available,running,retryable}');
        IF FOUND THEN
          -- Refused all the same, as when the limit was checked before the INSERT.
          PERFORM pgbus.check_payload(v_queue, enqueue_job.payload);
          IF EXISTS (SELECT 1 FROM pgbus.setting s WHERE v_queue::text = ANY (s.encrypted_queues)) THEN
            PERFORM pgbus.check_sealed(v_queue, enqueue_job.payload);
          END IF;
          duplicate := true;
          RETURN;
        END IF;
      END LOOP;
    END IF;
    -- The queue's max-wait (V56), counted from when the job is due; NULL: none. A caller's own
    -- deadline replaces it after (pgbus.set_start_by). Only for a queue pgbus.setting lists as
    -- having one (V57), which the INSERT said with a negative limit: every other enqueue reads
    -- nothing for it (a probe of pgbus.queue_max_wait in each INSERT cost every enqueue).
    IF v_limit < 0 THEN
      v_limit := -1 - v_limit;
      UPDATE pgbus.job j
         SET start_by = greatest(v_run_at, now()) + w.max_wait
        FROM pgbus.queue_max_wait w
       WHERE j.id = enqueue_job.id AND w.queue::text = v_queue::text;
    END IF;
    -- pgbus.check_payload's test (over a sixth of the limit, or compressed: see there); it raises
    -- the message. After the INSERT, so that the limit comes with it; the error undoes the row (and
    -- the wake it queued for the commit), so a refused payload still writes nothing.
    IF pg_catalog.pg_column_size(enqueue_job.payload) > v_limit / 6
       OR pg_catalog.pg_column_compression(enqueue_job.payload) IS NOT NULL THEN
      PERFORM pgbus.check_payload(v_queue, enqueue_job.payload);
      -- An encrypting queue (V53, v_limit 0) takes only a payload the Java API sealed. A batch's
      -- callback, enqueued from what its batch stored (pgbus.job_finished_as), is let by.
      IF v_limit = 0
         AND pg_catalog.current_setting('pgbus.stored_payload', true) IS DISTINCT FROM 'on' THEN
        PERFORM pgbus.check_sealed(v_queue, enqueue_job.payload);
      END IF;
    END IF;
    duplicate := false;
    -- No NOTIFY here: the row's deferred trigger (job_wake, V27) sends the wake at commit.
  END $$;

-- Enqueues one job in the caller's transaction and returns its id, or the id of the waiting or
-- running job that holds its unique key. Usable from any SQL client:
--   SELECT pgbus.enqueue('emails', '{"to":"a@example.com"}');
--   SELECT pgbus.enqueue('emails', '{}', run_at => now() + interval '5 minutes', priority => -1);
--   SELECT pgbus.enqueue('reports', '{"order":42}', unique_key => 'order-42');
-- SQL, and a single expression without FROM, so the planner inlines it into the calling query:
-- the caller's statement calls pgbus.enqueue_job directly, with no function call, parse or plan
-- of its own per call (V4 had made it PL/pgSQL because its body then selected FROM
-- pgbus.enqueue_job, which cannot be inlined). The body is parsed where it is inlined, with the
-- caller's path; it only calls pgbus.enqueue_job by its qualified name with parameters of exactly
-- its types, so nothing in it depends on the path. Its parameters are pgbus.enqueue_job's.
CREATE OR REPLACE FUNCTION pgbus.enqueue(
    queue text, payload jsonb, run_at timestamptz DEFAULT NULL, priority integer DEFAULT 0,
    max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL,
    trace_parent text DEFAULT NULL, trace_state text DEFAULT NULL,
    concurrency_key text DEFAULT NULL)
  RETURNS bigint
  LANGUAGE sql VOLATILE
  AS $$
    SELECT (pgbus.enqueue_job(enqueue.queue, enqueue.payload, enqueue.run_at, enqueue.priority,
                              enqueue.max_attempts, enqueue.unique_key,
                              enqueue.trace_parent, enqueue.trace_state,
                              enqueue.concurrency_key)).id
  $$;

-- Enqueues many jobs (arrays of equal length, NULL run_at = now) and returns their ids in input
-- order. Without unique keys: one INSERT, and at commit at most one wake per queue and now/later
-- (job_wake), not one per job. With unique keys: one pgbus.enqueue_job per element, in input
-- order, so a key repeated inside the batch or already waiting yields the existing id; ids may then repeat. One trace
-- context per job (NULL arrays: no trace). A multi-argument unnest in FROM is expanded by the
-- parser into pg_catalog.unnest calls, one per array, so it needs no qualifying (and cannot take
-- one).
CREATE OR REPLACE FUNCTION pgbus.enqueue_many(
    queues        text[],
    payloads      jsonb[],
    run_ats       timestamptz[],
    priorities    integer[],
    max_attempts  integer[],
    unique_keys   text[] DEFAULT NULL,
    trace_parents text[] DEFAULT NULL,
    trace_states  text[] DEFAULT NULL,
    concurrency_keys text[] DEFAULT NULL)
  RETURNS SETOF bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_null integer := coalesce(pg_catalog.array_position(payloads, NULL),
                               pg_catalog.array_position(payloads, 'null'::jsonb));
    v_limit integer;
    v_n integer := coalesce(pg_catalog.array_length(queues, 1), 0);
    -- pgbus.job's defaults of these two columns, read once per batch rather than once per row (a
    -- setting lookup each: issue #27, "every default the insert pays for").
    v_by text := coalesce(nullif(pg_catalog.current_setting('pgbus.principal', true), ''),
                          session_user::text);
    v_correlation text := nullif(pg_catalog.current_setting('pgbus.correlation_id', true), '');
    v_sealed text[];  -- the queues that encrypt (V53)
    v_waits text[];   -- the queues that have a max-wait (V57)
  BEGIN
    -- The setting row, once per batch: the payload limit (the default stands in should the row be
    -- gone) and the two lists of queues.
    SELECT s.max_payload_bytes, s.encrypted_queues, s.max_wait_queues
      INTO v_limit, v_sealed, v_waits
      FROM pgbus.setting s;
    v_limit := coalesce(v_limit, 1048576);
    -- The batch limit, as JobQueue.MAX_BATCH_SIZE in Java (docs/configuration.md, "Limits").
    IF v_n > 10000 THEN
      RAISE EXCEPTION 'pgbus: a batch of % jobs is over the limit of 10000 jobs per enqueue_many: split it into batches of at most 10000', v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF v_null IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload', v_null
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Queue names: pgbus.queue once per distinct name (it raises the message), not once per job;
    -- the INSERT's cast to the domain holds each row to the same rule.
    PERFORM pgbus.queue(d.q)
       FROM (SELECT DISTINCT t.q FROM pg_catalog.unnest(queues) AS t(q)) d;
    -- Checked for the whole batch before anything is written, in one pass. The filter only spares
    -- the calls (and check_payload's read of pgbus.setting) for the jobs that cannot fail them;
    -- the checks raise. The unique-key path below checks each job again in pgbus.enqueue_job.
    PERFORM CASE WHEN pg_catalog.pg_column_size(t.p) > v_limit / 6
                      OR pg_catalog.pg_column_compression(t.p) IS NOT NULL
                 THEN pgbus.check_payload(t.q, t.p) END,
            CASE WHEN NOT pg_catalog.isfinite(t.r) OR t.r > now() + interval '36500 days'
                 THEN pgbus.check_run_at(t.q, t.r) END
       FROM unnest(queues, payloads, run_ats) AS t(q, p, r)
      WHERE pg_catalog.pg_column_size(t.p) > v_limit / 6
         OR pg_catalog.pg_column_compression(t.p) IS NOT NULL
         OR NOT pg_catalog.isfinite(t.r) OR t.r > now() + interval '36500 days';
    IF pg_catalog.cardinality(v_sealed) > 0 THEN
      PERFORM pgbus.check_sealed(t.q, t.p, t.ord::integer)
         FROM unnest(queues, payloads) WITH ORDINALITY AS t(q, p, ord)
        WHERE t.q = ANY (v_sealed);
    END IF;
    IF trace_parents IS NOT NULL OR trace_states IS NOT NULL THEN
      PERFORM pgbus.check_trace(queues[i]::pgbus.queue_name, trace_parents[i], trace_states[i])
         FROM pg_catalog.generate_series(1, v_n) AS g(i);
    END IF;
    IF concurrency_keys IS NOT NULL THEN
      PERFORM pgbus.check_concurrency_key(queues[i]::pgbus.queue_name, concurrency_keys[i])
         FROM pg_catalog.generate_series(1, v_n) AS g(i)
        WHERE concurrency_keys[i] IS NOT NULL;
    END IF;
    IF unique_keys IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.unnest(unique_keys) k WHERE k IS NOT NULL) THEN
      FOR i IN 1 .. v_n LOOP
        RETURN NEXT (SELECT e.id
                       FROM pgbus.enqueue_job(queues[i], payloads[i], run_ats[i], priorities[i],
                                              max_attempts[i], unique_keys[i],
                                              trace_parents[i], trace_states[i],
                                              concurrency_keys[i]) e);
      END LOOP;
      RETURN;
    END IF;
    -- The rows straight from the arrays, read once (issue #15: the batch used to go through a
    -- CTE that the INSERT and the notifications both scanned, so it was materialized, and through
    -- two check passes of its own; docs/performance.md, "Enqueue at the raw ceiling").
    RETURN QUERY
      WITH inserted AS (
        INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, run_at,
                               trace_parent, trace_state, concurrency_key, enqueued_by,
                               correlation_id, start_by)
        SELECT t.q::pgbus.queue_name,
               CASE WHEN coalesce(t.r, now()) <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
               t.pr, t.p, t.m, coalesce(t.r, now()),
               trace_parents[t.ord], trace_states[t.ord], concurrency_keys[t.ord], v_by,
               v_correlation,
               -- The queue's max-wait (V56) from when the job is due, as pgbus.enqueue_job:
               -- probed only for a queue listed in pgbus.setting (V57).
               greatest(coalesce(t.r, now()), now())
                 + CASE WHEN t.q = ANY (v_waits)
                        THEN (SELECT w.max_wait FROM pgbus.queue_max_wait w
                               WHERE w.queue::text = t.q) END
          FROM unnest(queues, payloads, run_ats, priorities, max_attempts)
               WITH ORDINALITY AS t(q, p, r, pr, m, ord)
         ORDER BY t.ord
        RETURNING id
      )
      -- Identity values are assigned in insert order, which follows ORDER BY t.ord above.
      SELECT i.id FROM inserted i ORDER BY i.id;
    -- The wakes, one per queue and now/later, go out at commit (job_wake, V27).
  END $$;

-- Checks a concurrency key (V14) and makes sure its queue has a pgbus.queue_limit row, so that
-- every claim counts the key (limit 1 per key unless pgbus.queue_limit_set said otherwise).
-- Called only for a job with a key: an enqueue without one pays nothing. The row, when there is
-- one already, is found by the primary key and not written (ON CONFLICT DO NOTHING waits on no
-- row lock, so a claim holding the row does not hold up an enqueue).
CREATE OR REPLACE FUNCTION pgbus.check_concurrency_key(queue pgbus.queue_name, concurrency_key text)
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  AS $$
  #variable_conflict use_column
  BEGIN
    IF pg_catalog.btrim(check_concurrency_key.concurrency_key) = ''
       OR pg_catalog.length(check_concurrency_key.concurrency_key) > 255 THEN
      RAISE EXCEPTION 'pgbus: invalid concurrency key % (queue %, % characters): use 1 to 255 characters, not only blanks, or NULL for no key',
        pg_catalog.quote_literal(pg_catalog.left(check_concurrency_key.concurrency_key, 80)),
        check_concurrency_key.queue::text, pg_catalog.length(check_concurrency_key.concurrency_key)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO pgbus.queue_limit AS l (queue) VALUES (check_concurrency_key.queue)
      ON CONFLICT (queue) DO NOTHING;
  END $$;

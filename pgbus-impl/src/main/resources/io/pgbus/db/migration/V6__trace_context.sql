-- pgbus schema V6: the W3C trace context of the enqueuer is stored with the job (issue #11).
-- See docs/schema.md and docs/operations.md ("Tracing").
--   * pgbus.job.trace_parent / trace_state: nullable; NULL means "no trace" and costs nothing.
--   * pgbus.enqueue, enqueue_job, enqueue_many take an optional trace_parent and trace_state
--     (DEFAULT NULL), so every call written for V5 is still valid and means the same.
-- The values are untrusted input (any role that may enqueue sets them), so the table checks them
-- and the functions raise a clear error first: an invalid traceparent is rejected, not dropped,
-- because the caller passed it on purpose and would otherwise lose its trace without a word.
-- (The Java engine takes its values from OpenTelemetry, which only makes valid ones.)
-- Written path-independently like the V5 enqueue path (see V5__hardening.sql, "search_path"):
-- every call qualified with pg_catalog., only exact-type operators.

-- traceparent, version 00: 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>, 55 characters,
-- lower-case; an all-zero trace id or parent id is invalid. Other versions are not stored (a
-- later version may be longer or shaped differently: OpenTelemetry writes 00).
-- tracestate: at most 32 list members of at most 256 characters each; 512 characters is the
-- length that propagators must keep (W3C Trace Context, 3.3.1.5), printable ASCII only.
ALTER TABLE pgbus.job
  ADD COLUMN trace_parent text
    CONSTRAINT job_trace_parent_check CHECK (
      trace_parent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
      AND pg_catalog.substr(trace_parent, 4, 32) <> '00000000000000000000000000000000'
      AND pg_catalog.substr(trace_parent, 37, 16) <> '0000000000000000'),
  ADD COLUMN trace_state text
    CONSTRAINT job_trace_state_check CHECK (
      trace_state IS NULL
      OR (trace_parent IS NOT NULL AND pg_catalog.length(trace_state) <= 512
          AND trace_state ~ '^[\x20-\x7e]*$'));

-- The check of the two values, with an error that names the value and the fix. Called only when
-- a trace_parent is passed, so an enqueue without one pays nothing.
CREATE OR REPLACE FUNCTION pgbus.check_trace(queue pgbus.queue_name, trace_parent text, trace_state text)
  RETURNS void
  LANGUAGE plpgsql IMMUTABLE
  AS $$
  BEGIN
    IF check_trace.trace_parent IS NULL THEN
      IF check_trace.trace_state IS NOT NULL THEN
        RAISE EXCEPTION 'pgbus: trace_state without trace_parent (queue %): pass the traceparent too, or no tracestate',
          check_trace.queue::text
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
      RETURN;
    END IF;
    IF pg_catalog.length(check_trace.trace_parent) <> 55
       OR check_trace.trace_parent !~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'
       OR pg_catalog.substr(check_trace.trace_parent, 4, 32) = '00000000000000000000000000000000'
       OR pg_catalog.substr(check_trace.trace_parent, 37, 16) = '0000000000000000' THEN
      RAISE EXCEPTION 'pgbus: invalid trace_parent % (queue %): pass a W3C traceparent of version 00 (00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all zero), or NULL for no trace',
        pg_catalog.quote_literal(pg_catalog.left(check_trace.trace_parent, 80)), check_trace.queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF check_trace.trace_state IS NOT NULL
       AND (pg_catalog.length(check_trace.trace_state) > 512
            OR check_trace.trace_state !~ '^[\x20-\x7e]*$') THEN
      RAISE EXCEPTION 'pgbus: invalid trace_state % (queue %): pass a W3C tracestate of at most 512 printable ASCII characters, or NULL',
        pg_catalog.quote_literal(pg_catalog.left(check_trace.trace_state, 80)), check_trace.queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
  END $$;

-- The new parameters change the signatures: the V5 functions go (as V3 did with V1's), so that
-- a call without the new parameters has exactly one candidate. Grants made with ALTER DEFAULT
-- PRIVILEGES (docs/operations.md, "Roles and grants") cover the new functions; EXECUTE is
-- granted to PUBLIC by default.
DROP FUNCTION pgbus.enqueue(text, jsonb, timestamptz, integer, integer, text);
DROP FUNCTION pgbus.enqueue_many(text[], jsonb[], timestamptz[], integer[], integer[], text[]);
DROP FUNCTION pgbus.enqueue_job(text, jsonb, timestamptz, integer, integer, text);

-- The enqueue of V5, with the trace context.
CREATE FUNCTION pgbus.enqueue_job(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25,
    unique_key   text        DEFAULT NULL,
    trace_parent text        DEFAULT NULL,
    trace_state  text        DEFAULT NULL,
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
    LOOP
      -- The inference predicate is job_unique_idx's, word for word but for the operator, which
      -- is the one the index was built with (enum_eq), named so that no look-alike can stand in.
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at, unique_key,
                                  trace_parent, trace_state)
      VALUES (v_queue, v_state, enqueue_job.priority, enqueue_job.payload,
              enqueue_job.max_attempts, v_run_at, enqueue_job.unique_key,
              enqueue_job.trace_parent, enqueue_job.trace_state)
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

-- The one-job enqueue of V4, with the trace context.
CREATE FUNCTION pgbus.enqueue(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25,
    unique_key   text        DEFAULT NULL,
    trace_parent text        DEFAULT NULL,
    trace_state  text        DEFAULT NULL)
  RETURNS bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_id bigint;
  BEGIN
    SELECT e.id INTO v_id
      FROM pgbus.enqueue_job(enqueue.queue, enqueue.payload, enqueue.run_at, enqueue.priority,
                             enqueue.max_attempts, enqueue.unique_key,
                             enqueue.trace_parent, enqueue.trace_state) e;
    RETURN v_id;
  END $$;

-- The batch enqueue of V5, with one trace context per job (NULL arrays: no trace).
CREATE FUNCTION pgbus.enqueue_many(
    queues        text[],
    payloads      jsonb[],
    run_ats       timestamptz[],
    priorities    integer[],
    max_attempts  integer[],
    unique_keys   text[] DEFAULT NULL,
    trace_parents text[] DEFAULT NULL,
    trace_states  text[] DEFAULT NULL)
  RETURNS SETOF bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_null integer := coalesce(pg_catalog.array_position(payloads, NULL),
                               pg_catalog.array_position(payloads, 'null'::jsonb));
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    v_n integer := coalesce(pg_catalog.array_length(queues, 1), 0);
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
    IF trace_parents IS NOT NULL OR trace_states IS NOT NULL THEN
      PERFORM pgbus.check_trace(pgbus.queue(queues[i]), trace_parents[i], trace_states[i])
         FROM pg_catalog.generate_series(1, v_n) AS g(i);
    END IF;
    IF unique_keys IS NOT NULL
       AND EXISTS (SELECT 1 FROM pg_catalog.unnest(unique_keys) k WHERE k IS NOT NULL) THEN
      FOR i IN 1 .. v_n LOOP
        RETURN NEXT (SELECT e.id
                       FROM pgbus.enqueue_job(queues[i], payloads[i], run_ats[i], priorities[i],
                                              max_attempts[i], unique_keys[i],
                                              trace_parents[i], trace_states[i]) e);
      END LOOP;
      RETURN;
    END IF;
    RETURN QUERY
      WITH input AS (
        SELECT pgbus.queue(t.q) AS queue, t.p AS payload, coalesce(t.r, now()) AS run_at,
               t.pr AS priority, t.m AS max_attempts, t.ord,
               trace_parents[t.ord] AS trace_parent, trace_states[t.ord] AS trace_state
          FROM unnest(queues, payloads, run_ats, priorities, max_attempts)
               WITH ORDINALITY AS t(q, p, r, pr, m, ord)
      ), inserted AS (
        INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, run_at,
                               trace_parent, trace_state)
        SELECT i.queue,
               CASE WHEN i.run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
               i.priority, i.payload, i.max_attempts, i.run_at, i.trace_parent, i.trace_state
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

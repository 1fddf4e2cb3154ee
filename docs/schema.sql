-- The pgbus schema as a fresh install has it: every type, table, index and function, current.
-- Generated from the migrations by tools/dump-schema (pg_dump --schema-only); do not edit.
-- SchemaDumpTest fails when this file and the migrations disagree. See docs/schema.md.

--
-- Name: pgbus; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA pgbus;

--
-- Name: job_state; Type: TYPE; Schema: pgbus; Owner: -
--

CREATE TYPE pgbus.job_state AS ENUM (
    'scheduled',
    'available',
    'running',
    'retryable',
    'completed',
    'dead',
    'cancelled'
);

--
-- Name: queue_name; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.queue_name AS text
	CONSTRAINT queue_name_check CHECK (((VALUE ~ '^[a-z][a-z0-9_]*$'::text) AND (length(VALUE) <= 48)));

--
-- Name: actor(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.actor() RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$ SELECT coalesce(nullif(current_setting('pgbus.principal', true), ''), session_user::text) $$;

--
-- Name: channel(pgbus.queue_name); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.channel(queue pgbus.queue_name) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT 'pgbus_' || queue::text $$;

--
-- Name: check_dependencies(text, bigint[], text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_dependencies(queue text, depends_on bigint[], on_failures text[]) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    IF depends_on IS NULL OR cardinality(depends_on) = 0 THEN
      RAISE EXCEPTION 'pgbus: a job for queue % waits on no job: pass at least one job id, or enqueue it without dependencies', queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(depends_on) > 100 THEN
      RAISE EXCEPTION 'pgbus: a job for queue % waits on % jobs, over the limit of 100 dependencies per job: wait on a batch''s callback instead', queue, cardinality(depends_on)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF array_position(depends_on, NULL) IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: dependency % of a job for queue % is NULL: pass job ids', array_position(depends_on, NULL), queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(on_failures) IS DISTINCT FROM cardinality(depends_on)
       OR EXISTS (SELECT 1 FROM unnest(on_failures) f WHERE f IS NULL OR f NOT IN ('hold', 'cancel')) THEN
      RAISE EXCEPTION 'pgbus: on_failures % (queue %) must give hold or cancel for each of the % dependencies', on_failures, queue, cardinality(depends_on)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
  END $$;

--
-- Name: check_payload(text, jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

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

--
-- Name: check_run_at(text, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_run_at(queue text, run_at timestamp with time zone) RETURNS void
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

--
-- Name: check_trace(pgbus.queue_name, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_trace(queue pgbus.queue_name, trace_parent text, trace_state text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
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
  END $_$;

--
-- Name: job; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job (
    id bigint NOT NULL,
    queue pgbus.queue_name NOT NULL,
    state pgbus.job_state DEFAULT 'available'::pgbus.job_state NOT NULL,
    priority smallint DEFAULT 0 NOT NULL,
    payload jsonb NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 25 NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempted_at timestamp with time zone,
    attempted_by text,
    lease_expires_at timestamp with time zone,
    errors jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finalized_at timestamp with time zone,
    unique_key text,
    trace_parent text,
    trace_state text,
    enqueued_by text DEFAULT COALESCE(NULLIF(current_setting('pgbus.principal'::text, true), ''::text), (SESSION_USER)::text),
    correlation_id text DEFAULT NULLIF(current_setting('pgbus.correlation_id'::text, true), ''::text),
    cancel_attempt integer,
    progress jsonb,
    result jsonb,
    batch_id bigint,
    linked boolean DEFAULT false NOT NULL,
    CONSTRAINT job_cancel_attempt_check CHECK ((cancel_attempt >= 1)),
    CONSTRAINT job_correlation_id_check CHECK (((length(correlation_id) >= 1) AND (length(correlation_id) <= 128))),
    CONSTRAINT job_enqueued_by_check CHECK (((length(enqueued_by) >= 1) AND (length(enqueued_by) <= 256))),
    CONSTRAINT job_max_attempts_check CHECK ((max_attempts >= 1)),
    CONSTRAINT job_priority_check CHECK (((priority >= '-100'::integer) AND (priority <= 100))),
    CONSTRAINT job_trace_parent_check CHECK (((trace_parent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'::text) AND (substr(trace_parent, 4, 32) <> '00000000000000000000000000000000'::text) AND (substr(trace_parent, 37, 16) <> '0000000000000000'::text))),
    CONSTRAINT job_trace_state_check CHECK (((trace_state IS NULL) OR ((trace_parent IS NOT NULL) AND (length(trace_state) <= 512) AND (trace_state ~ '^[\x20-\x7e]*$'::text)))),
    CONSTRAINT job_unique_key_check CHECK (((length(unique_key) >= 1) AND (length(unique_key) <= 255)))
);

--
-- Name: claim(text[], integer, text, interval); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim(queues text[], max_jobs integer, worker text, lease interval) RETURNS SETOF pgbus.job
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET enable_sort TO 'off'
    SET jit TO 'off'
    AS $_$
  DECLARE
    q text;
    prio smallint;
    remaining integer := max_jobs;
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    buried integer;
    r record;
  BEGIN
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      prio := -32768;  -- below any priority (the column's check allows -100..100)
      LOOP
        -- The queue's next priority level with a waiting job, due or not.
        SELECT c.priority INTO prio
          FROM pgbus.job c
         WHERE c.queue = q
           AND c.state IN ('available', 'scheduled', 'retryable')
           AND c.priority > prio
         ORDER BY c.priority
         LIMIT 1;
        EXIT WHEN NOT FOUND;
        LOOP
          buried := 0;
          FOR r IN
            WITH picked AS (
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pgbus.job c
               WHERE c.queue = q
                 AND c.priority = prio
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
        EXIT WHEN remaining <= 0;
      END LOOP;
    END LOOP;
  END $_$;

--
-- Name: enqueue(text, jsonb, timestamp with time zone, integer, integer, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
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

--
-- Name: enqueue_after(text, jsonb, bigint[], text[], integer, integer, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_after(queue text, payload jsonb, depends_on bigint[], on_failures text[] DEFAULT NULL::text[], priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, OUT id bigint, OUT duplicate boolean) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_deps bigint[];
    v_policy text[] := coalesce(enqueue_after.on_failures,
                                array_fill('cancel'::text, ARRAY[cardinality(enqueue_after.depends_on)]));
    v_missing bigint[];
    v_waiting integer;
    v_failed integer;
  BEGIN
    PERFORM pgbus.check_dependencies(enqueue_after.queue, enqueue_after.depends_on, v_policy);
    v_deps := ARRAY(SELECT DISTINCT d FROM unnest(enqueue_after.depends_on) d ORDER BY d);
    v_missing := ARRAY(SELECT d FROM unnest(v_deps) d
                        WHERE NOT EXISTS (SELECT 1 FROM pgbus.job j WHERE j.id = d));
    IF cardinality(v_missing) > 0 THEN
      RAISE EXCEPTION 'pgbus: unknown job id(s) % in the dependencies of a job for queue %: depend only on jobs that exist (a job deleted on completion or pruned is gone)',
        v_missing, enqueue_after.queue
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    -- Lock and mark the dependencies, in id order.
    WITH marked AS (
      UPDATE pgbus.job j SET linked = true
       WHERE j.id = ANY (v_deps)
      RETURNING j.id, j.state)
    SELECT count(*) FILTER (WHERE m.state NOT IN ('completed', 'dead', 'cancelled')),
           count(*) FILTER (WHERE m.state IN ('dead', 'cancelled'))
      INTO v_waiting, v_failed
      FROM marked m;
    SELECT e.id, e.duplicate INTO enqueue_after.id, enqueue_after.duplicate
      FROM pgbus.enqueue_job(enqueue_after.queue, enqueue_after.payload,
                             CASE WHEN v_waiting + v_failed > 0 THEN now() + interval '36500 days' END,
                             enqueue_after.priority, enqueue_after.max_attempts,
                             enqueue_after.unique_key, enqueue_after.trace_parent,
                             enqueue_after.trace_state) e;
    IF enqueue_after.duplicate THEN
      RETURN;
    END IF;
    UPDATE pgbus.job j SET linked = true WHERE j.id = enqueue_after.id;
    -- A dependency given twice keeps its first policy.
    INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state, result)
    SELECT DISTINCT ON (j.id) j.id, enqueue_after.id, p.on_failure,
           CASE WHEN j.state = 'completed' THEN 'completed'
                WHEN j.state IN ('dead', 'cancelled') THEN 'failed'
                ELSE 'waiting' END,
           CASE WHEN j.state = 'completed' THEN j.result END
      FROM unnest(enqueue_after.depends_on, v_policy) WITH ORDINALITY AS p(id, on_failure, ord)
      JOIN pgbus.job j ON j.id = p.id
     ORDER BY j.id, p.ord;
    IF EXISTS (SELECT 1 FROM pgbus.job_dependency d
                WHERE d.job_id = enqueue_after.id AND d.state = 'failed' AND d.on_failure = 'cancel') THEN
      UPDATE pgbus.job j SET state = 'cancelled', finalized_at = now() WHERE j.id = enqueue_after.id;
      PERFORM pgbus.job_finished(ARRAY[enqueue_after.id]);
    END IF;
  END $$;

--
-- Name: enqueue_batch(text[], jsonb[], integer[], integer[], text, jsonb, integer, integer, text[], text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_batch(queues text[], payloads jsonb[], priorities integer[], max_attempts integer[], callback_queue text, callback_payload jsonb, callback_priority integer DEFAULT 0, callback_attempts integer DEFAULT 25, trace_parents text[] DEFAULT NULL::text[], trace_states text[] DEFAULT NULL::text[], OUT batch_id bigint, OUT job_ids bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_n integer := coalesce(array_length(queues, 1), 0);
    v_cbq pgbus.queue_name := pgbus.queue(enqueue_batch.callback_queue);
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
  BEGIN
    IF v_n = 0 OR v_n > 10000 THEN
      RAISE EXCEPTION 'pgbus: a batch of % jobs is out of range: a batch has 1 to 10000 members; split a larger one, or chain batches through their callbacks', v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF enqueue_batch.callback_payload IS NULL OR jsonb_typeof(enqueue_batch.callback_payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: the callback payload of a batch (queue %) must not be null; use ''{}'' for an empty payload', v_cbq
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM pgbus.check_payload(v_cbq, enqueue_batch.callback_payload);
    INSERT INTO pgbus.batch (size, pending, callback_queue, callback_payload, callback_priority,
                             callback_attempts)
    VALUES (v_n, v_n, v_cbq, enqueue_batch.callback_payload, enqueue_batch.callback_priority,
            enqueue_batch.callback_attempts)
    RETURNING id INTO batch_id;
    IF pg_catalog.array_position(payloads, NULL) IS NOT NULL
       OR pg_catalog.array_position(payloads, 'null'::jsonb) IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload',
        coalesce(array_position(payloads, NULL), array_position(payloads, 'null'::jsonb))
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- As in pgbus.enqueue_many: only a payload that could be over the limit is measured.
    PERFORM pgbus.check_payload(t.q, t.p)
       FROM unnest(queues, payloads) AS t(q, p)
      WHERE pg_column_size(t.p) > v_limit / 6;
    IF trace_parents IS NOT NULL OR trace_states IS NOT NULL THEN
      PERFORM pgbus.check_trace(pgbus.queue(queues[i]), trace_parents[i], trace_states[i])
         FROM generate_series(1, v_n) AS g(i);
    END IF;
    -- The members as pgbus.enqueue_many inserts them, with their batch, in one INSERT and one
    -- notification per queue. Identity values follow the ORDER BY, so ids are in input order.
    WITH inserted AS (
      INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, trace_parent,
                             trace_state, batch_id, linked)
      SELECT pgbus.queue(t.q), 'available', t.pr, t.p, t.m, trace_parents[t.ord],
             trace_states[t.ord], enqueue_batch.batch_id, true
        FROM unnest(queues, payloads, priorities, max_attempts)
             WITH ORDINALITY AS t(q, p, pr, m, ord)
       ORDER BY t.ord
      RETURNING id, queue)
    SELECT array_agg(i.id ORDER BY i.id) INTO job_ids FROM inserted i;
    PERFORM pgbus.notify(q.queue, now())
       FROM (SELECT DISTINCT pgbus.queue(t.q) AS queue FROM unnest(queues) AS t(q)) q;
  END $$;

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, integer, integer, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_job(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, OUT id bigint, OUT duplicate boolean) RETURNS record
    LANGUAGE plpgsql
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

--
-- Name: enqueue_many(text[], jsonb[], timestamp with time zone[], integer[], integer[], text[], text[], text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_many(queues text[], payloads jsonb[], run_ats timestamp with time zone[], priorities integer[], max_attempts integer[], unique_keys text[] DEFAULT NULL::text[], trace_parents text[] DEFAULT NULL::text[], trace_states text[] DEFAULT NULL::text[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
    AS $$
  DECLARE
    v_null integer := coalesce(pg_catalog.array_position(payloads, NULL),
                               pg_catalog.array_position(payloads, 'null'::jsonb));
    v_limit integer := coalesce((SELECT s.max_payload_bytes FROM pgbus.setting s), 1048576);
    v_n integer := coalesce(pg_catalog.array_length(queues, 1), 0);
  BEGIN
    -- The batch limit, as JobQueue.MAX_BATCH_SIZE in Java (docs/configuration.md, "Limits").
    IF v_n > 10000 THEN
      RAISE EXCEPTION 'pgbus: a batch of % jobs is over the limit of 10000 jobs per enqueue_many: split it into batches of at most 10000', v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
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

--
-- Name: job_finished(bigint[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_finished(ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_ids bigint[];
    v_batches bigint[];
    v_states text[];
    v_results jsonb[];
  BEGIN
    SELECT array_agg(j.id ORDER BY j.id), array_agg(j.batch_id ORDER BY j.id),
           array_agg(j.state::text ORDER BY j.id), array_agg(j.result ORDER BY j.id)
      INTO v_ids, v_batches, v_states, v_results
      FROM pgbus.job j
     WHERE j.id = ANY (job_finished.ids) AND j.state IN ('completed', 'dead', 'cancelled');
    IF v_ids IS NOT NULL THEN
      PERFORM pgbus.job_finished_as(v_ids, v_batches, v_states, v_results);
    END IF;
  END $$;

--
-- Name: job_finished_as(bigint[], bigint[], text[], jsonb[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_finished_as(ids bigint[], batches bigint[], states text[], results jsonb[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    w_ids     bigint[] := ids;
    w_batches bigint[] := batches;
    w_states  text[]   := states;
    w_results jsonb[]  := results;
    v_cancel  bigint[];
    b record;
    x record;
    v_cb bigint;
    v_woken bigint;
  BEGIN
    WHILE coalesce(array_length(w_ids, 1), 0) > 0 LOOP
      -- Batches, in id order.
      FOR b IN
        SELECT t.batch, count(*) FILTER (WHERE t.state = 'completed')::int AS completed,
               count(*) FILTER (WHERE t.state = 'dead')::int AS dead,
               count(*) FILTER (WHERE t.state = 'cancelled')::int AS cancelled
          FROM unnest(w_batches, w_states) AS t(batch, state)
         WHERE t.batch IS NOT NULL
         GROUP BY t.batch
         ORDER BY t.batch
      LOOP
        UPDATE pgbus.batch k
           SET pending = k.pending - (b.completed + b.dead + b.cancelled),
               completed = k.completed + b.completed,
               dead = k.dead + b.dead,
               cancelled = k.cancelled + b.cancelled
         WHERE k.id = b.batch AND k.pending >= b.completed + b.dead + b.cancelled
        RETURNING k.id, k.pending, k.callback_job_id, k.callback_queue, k.callback_payload,
                  k.callback_priority, k.callback_attempts
          INTO x;
        IF FOUND AND x.pending = 0 AND x.callback_job_id IS NULL THEN
          SELECT e.id INTO v_cb
            FROM pgbus.enqueue_job(x.callback_queue::text, x.callback_payload, NULL,
                                   x.callback_priority::int, x.callback_attempts) e;
          UPDATE pgbus.batch k SET callback_job_id = v_cb, finished_at = now() WHERE k.id = x.id;
        END IF;
      END LOOP;

      -- Dependents of completed jobs: the edge is completed and keeps the result.
      UPDATE pgbus.job_dependency d
         SET state = 'completed', result = t.result
        FROM unnest(w_ids, w_states, w_results) AS t(id, state, result)
       WHERE d.depends_on = t.id AND t.state = 'completed' AND d.state <> 'completed';

      -- ... and a waiting dependent with no edge left undone may run now, with a wake-up. Its row
      -- is locked first, in id order, in a statement of its own: two transactions that complete
      -- two dependencies of one job at once then check its edges one after the other, the second
      -- with a snapshot taken after the first committed, so one of them releases it (checked in
      -- the same statement as the lock, both could see the other's edge still waiting).
      PERFORM 1
         FROM pgbus.job j
        WHERE j.id IN (SELECT d.job_id
                         FROM pgbus.job_dependency d
                         JOIN unnest(w_ids, w_states) AS t(id, state) ON d.depends_on = t.id
                        WHERE t.state = 'completed')
        ORDER BY j.id
          FOR UPDATE;
      WITH released AS (
        UPDATE pgbus.job j
           SET state = 'available', run_at = now()
         WHERE j.id IN (SELECT d.job_id
                          FROM pgbus.job_dependency d
                          JOIN unnest(w_ids, w_states) AS t(id, state) ON d.depends_on = t.id
                         WHERE t.state = 'completed')
           AND j.state = 'scheduled'
           AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency o
                            WHERE o.job_id = j.id AND o.state <> 'completed')
        RETURNING j.queue)
      SELECT count(*) INTO v_woken
        FROM (SELECT pgbus.notify(r.queue, now()) FROM released r GROUP BY r.queue) n;

      -- Dependents of dead or cancelled jobs: the edge fails; 'cancel' edges cancel the dependent.
      WITH failed AS (
        UPDATE pgbus.job_dependency d
           SET state = 'failed'
          FROM unnest(w_ids, w_states) AS t(id, state)
         WHERE d.depends_on = t.id AND t.state IN ('dead', 'cancelled') AND d.state <> 'completed'
        RETURNING d.job_id, d.on_failure)
      SELECT array_agg(DISTINCT f.job_id) FILTER (WHERE f.on_failure = 'cancel')
        INTO v_cancel
        FROM failed f;

      -- A dependent that completed or was cancelled needs its incoming edges no more; a dead one
      -- keeps them, so that a replay still reads its dependencies' results.
      DELETE FROM pgbus.job_dependency d
       USING unnest(w_ids, w_states) AS t(id, state)
       WHERE d.job_id = t.id AND t.state IN ('completed', 'cancelled');

      -- The next round: the dependents just cancelled, reported in turn.
      w_ids := NULL;
      IF v_cancel IS NOT NULL THEN
        WITH cancelled AS (
          UPDATE pgbus.job j
             SET state = 'cancelled', finalized_at = now()
           WHERE j.id = ANY (v_cancel)
             AND j.state IN ('scheduled', 'available', 'retryable')
          RETURNING j.id, j.batch_id)
        SELECT array_agg(c.id), array_agg(c.batch_id), array_agg('cancelled'::text),
               array_agg(NULL::jsonb)
          INTO w_ids, w_batches, w_states, w_results
          FROM cancelled c;
      END IF;
    END LOOP;
  END $$;

--
-- Name: listen(text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.listen(channels text[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE c text;
  BEGIN
    FOREACH c IN ARRAY channels LOOP
      EXECUTE pg_catalog.format('LISTEN %I', c);
    END LOOP;
  END $$;

--
-- Name: notify(pgbus.queue_name, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.notify(queue pgbus.queue_name, due timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = notify.queue::text) THEN
      PERFORM pg_catalog.pg_notify(
                pgbus.channel(notify.queue),
                CASE WHEN notify.due <= now() THEN ''
                     ELSE (pg_catalog.ceil(extract(epoch FROM notify.due)::numeric * 1000.0))::bigint::text END);
    END IF;
  END $$;

--
-- Name: pause(text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.pause(queue text, paused_by text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    INSERT INTO pgbus.queue_pause (queue, paused_by)
    VALUES (pgbus.queue(pause.queue), coalesce(pause.paused_by, current_user::text))
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    INSERT INTO pgbus.audit (actor, action, queue) VALUES (pgbus.actor(), 'pause', pause.queue);
    RETURN true;
  END $$;

--
-- Name: queue(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue(name text) RETURNS pgbus.queue_name
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
  BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]*$' OR pg_catalog.length(name) > 48 THEN
      RAISE EXCEPTION 'pgbus: invalid queue name %: use a lower-case letter followed by lower-case letters, digits or _, at most 48 characters', pg_catalog.quote_nullable(name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN name::pgbus.queue_name;
  END $_$;

--
-- Name: resume(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.resume(queue text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(resume.queue);
    v_due   timestamptz;
  BEGIN
    DELETE FROM pgbus.queue_pause p WHERE p.queue = v_queue;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    INSERT INTO pgbus.audit (actor, action, queue) VALUES (pgbus.actor(), 'resume', resume.queue);
    SELECT min(j.run_at) INTO v_due
      FROM pgbus.job j
     WHERE j.queue = v_queue AND j.state IN ('available', 'scheduled', 'retryable');
    IF v_due IS NOT NULL THEN
      PERFORM pgbus.notify(v_queue, v_due);
    END IF;
    RETURN true;
  END $$;

--
-- Name: audit; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.audit (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    queue text NOT NULL,
    job_id bigint,
    detail jsonb,
    CONSTRAINT audit_action_check CHECK ((action = ANY (ARRAY['cancel'::text, 'replay'::text, 'pause'::text, 'resume'::text, 'retry'::text, 'delete'::text]))),
    CONSTRAINT audit_actor_check CHECK (((length(actor) >= 1) AND (length(actor) <= 256)))
);

--
-- Name: audit_id_seq; Type: SEQUENCE; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgbus.audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: batch; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.batch (
    id bigint NOT NULL,
    size integer NOT NULL,
    pending integer NOT NULL,
    completed integer DEFAULT 0 NOT NULL,
    dead integer DEFAULT 0 NOT NULL,
    cancelled integer DEFAULT 0 NOT NULL,
    callback_queue pgbus.queue_name NOT NULL,
    callback_payload jsonb NOT NULL,
    callback_priority smallint DEFAULT 0 NOT NULL,
    callback_attempts integer DEFAULT 25 NOT NULL,
    callback_job_id bigint,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finished_at timestamp with time zone,
    CONSTRAINT batch_counts_chk CHECK (((((completed + dead) + cancelled) + pending) = size)),
    CONSTRAINT batch_pending_check CHECK ((pending >= 0)),
    CONSTRAINT batch_size_check CHECK (((size >= 1) AND (size <= 10000)))
);

--
-- Name: batch_id_seq; Type: SEQUENCE; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.batch ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgbus.batch_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: cron; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.cron (
    name text NOT NULL,
    last_run_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: job_dependency; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_dependency (
    depends_on bigint NOT NULL,
    job_id bigint NOT NULL,
    on_failure text NOT NULL,
    state text DEFAULT 'waiting'::text NOT NULL,
    result jsonb,
    CONSTRAINT job_dependency_on_failure_check CHECK ((on_failure = ANY (ARRAY['hold'::text, 'cancel'::text]))),
    CONSTRAINT job_dependency_result_check CHECK (((result IS NULL) OR (octet_length((result)::text) <= 65536))),
    CONSTRAINT job_dependency_state_check CHECK ((state = ANY (ARRAY['waiting'::text, 'completed'::text, 'failed'::text])))
);

--
-- Name: job_id_seq; Type: SEQUENCE; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgbus.job_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: leader; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.leader (
    name text NOT NULL,
    holder text NOT NULL,
    elected_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

--
-- Name: node; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.node (
    worker_id text NOT NULL,
    host text NOT NULL,
    pid bigint,
    started_at timestamp with time zone NOT NULL,
    seen_at timestamp with time zone NOT NULL,
    listener text NOT NULL,
    mode text NOT NULL,
    listener_pid integer,
    capsules jsonb DEFAULT '[]'::jsonb NOT NULL,
    CONSTRAINT node_mode_check CHECK ((mode = ANY (ARRAY['notify'::text, 'polling'::text])))
);

--
-- Name: queue_pause; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_pause (
    queue pgbus.queue_name NOT NULL,
    paused_at timestamp with time zone DEFAULT now() NOT NULL,
    paused_by text
);

--
-- Name: setting; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.setting (
    id boolean DEFAULT true NOT NULL,
    max_payload_bytes integer DEFAULT 1048576 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text,
    CONSTRAINT setting_id_check CHECK (id),
    CONSTRAINT setting_max_payload_bytes_check CHECK ((max_payload_bytes > 0))
);

--
-- Name: audit audit_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.audit
    ADD CONSTRAINT audit_pkey PRIMARY KEY (id);

--
-- Name: batch batch_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.batch
    ADD CONSTRAINT batch_pkey PRIMARY KEY (id);

--
-- Name: cron cron_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.cron
    ADD CONSTRAINT cron_pkey PRIMARY KEY (name);

--
-- Name: job_dependency job_dependency_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_dependency
    ADD CONSTRAINT job_dependency_pkey PRIMARY KEY (depends_on, job_id);

--
-- Name: job job_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job
    ADD CONSTRAINT job_pkey PRIMARY KEY (id);

--
-- Name: job job_progress_shape; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job
    ADD CONSTRAINT job_progress_shape CHECK (((progress IS NULL) OR ((jsonb_typeof(progress) = 'object'::text) AND (octet_length((progress)::text) <= 1024) AND
CASE
    WHEN (jsonb_typeof((progress -> 'percent'::text)) = 'number'::text) THEN ((((progress ->> 'percent'::text))::numeric >= (0)::numeric) AND (((progress ->> 'percent'::text))::numeric <= (100)::numeric))
    ELSE false
END AND (COALESCE(jsonb_typeof((progress -> 'message'::text)), 'null'::text) = ANY (ARRAY['string'::text, 'null'::text])) AND (COALESCE(length((progress ->> 'message'::text)), 0) <= 200)))) NOT VALID;

--
-- Name: job job_result_size_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job
    ADD CONSTRAINT job_result_size_chk CHECK (((result IS NULL) OR (octet_length((result)::text) <= 65536))) NOT VALID;

--
-- Name: leader leader_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.leader
    ADD CONSTRAINT leader_pkey PRIMARY KEY (name);

--
-- Name: node node_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.node
    ADD CONSTRAINT node_pkey PRIMARY KEY (worker_id);

--
-- Name: queue_pause queue_pause_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_pause
    ADD CONSTRAINT queue_pause_pkey PRIMARY KEY (queue);

--
-- Name: setting setting_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.setting
    ADD CONSTRAINT setting_pkey PRIMARY KEY (id);

--
-- Name: audit_job_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX audit_job_idx ON pgbus.audit USING btree (job_id) WHERE (job_id IS NOT NULL);

--
-- Name: audit_queue_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX audit_queue_idx ON pgbus.audit USING btree (queue, id);

--
-- Name: batch_callback_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX batch_callback_idx ON pgbus.batch USING btree (callback_job_id) WHERE (callback_job_id IS NOT NULL);

--
-- Name: job_batch_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_batch_idx ON pgbus.job USING btree (batch_id) WHERE (batch_id IS NOT NULL);

--
-- Name: job_claim_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_claim_idx ON pgbus.job USING btree (queue, priority, run_at, id) WHERE (state = ANY (ARRAY['available'::pgbus.job_state, 'scheduled'::pgbus.job_state, 'retryable'::pgbus.job_state]));

--
-- Name: job_created_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_created_idx ON pgbus.job USING btree (created_at);

--
-- Name: job_dead_payload_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_dead_payload_idx ON pgbus.job USING gin (payload jsonb_path_ops) WHERE (state = 'dead'::pgbus.job_state);

--
-- Name: job_dependency_job_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_dependency_job_idx ON pgbus.job_dependency USING btree (job_id);

--
-- Name: job_due_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_due_idx ON pgbus.job USING btree (queue, run_at) WHERE (state = ANY (ARRAY['available'::pgbus.job_state, 'scheduled'::pgbus.job_state, 'retryable'::pgbus.job_state]));

--
-- Name: job_finalized_queue_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_finalized_queue_idx ON pgbus.job USING btree (state, finalized_at) INCLUDE (queue) WHERE (state = ANY (ARRAY['completed'::pgbus.job_state, 'dead'::pgbus.job_state, 'cancelled'::pgbus.job_state]));

--
-- Name: job_lease_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_lease_idx ON pgbus.job USING btree (lease_expires_at) WHERE (state = 'running'::pgbus.job_state);

--
-- Name: job_queue_state_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_queue_state_idx ON pgbus.job USING btree (queue, state, id);

--
-- Name: job_unique_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE UNIQUE INDEX job_unique_idx ON pgbus.job USING btree (queue, unique_key) WHERE ((unique_key IS NOT NULL) AND (state = ANY (ARRAY['scheduled'::pgbus.job_state, 'available'::pgbus.job_state, 'running'::pgbus.job_state, 'retryable'::pgbus.job_state])));

--
-- Name: job_unique_key_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_unique_key_idx ON pgbus.job USING btree (unique_key) WHERE (unique_key IS NOT NULL);

--
-- Name: TABLE setting; Type: ACL; Schema: pgbus; Owner: -
--

GRANT SELECT ON TABLE pgbus.setting TO PUBLIC;

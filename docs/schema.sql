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
-- Name: check_concurrency_key(pgbus.queue_name, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_concurrency_key(queue pgbus.queue_name, concurrency_key text) RETURNS void
    LANGUAGE plpgsql
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
    concurrency_key text,
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
    lim record;          -- the queue's pgbus.queue_limit row, when it has one
    limited boolean;
    holding boolean := false;  -- this claim holds a limit row (until its commit)
    q_left integer;      -- what this queue may still take
    keyed boolean;       -- the queue counts running jobs per concurrency key
    v_ids bigint[];      -- keyed: the candidates that keep every key within its limit
    v_window integer;
    v_seen integer;
  BEGIN
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      IF NOT holding THEN
        SELECT l.global_concurrency, l.key_concurrency INTO lim
          FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE;
        limited := FOUND;
      ELSE
        SELECT l.global_concurrency, l.key_concurrency INTO lim
          FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE SKIP LOCKED;
        limited := FOUND;
        IF NOT limited AND EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = q) THEN
          PERFORM pgbus.notify(q, now());  -- another claim holds it: come back after its commit
          CONTINUE;
        END IF;
      END IF;
      q_left := remaining;
      keyed := false;
      IF limited THEN
        holding := true;
        IF current_setting('transaction_isolation') <> 'read committed' THEN
          RAISE EXCEPTION 'pgbus: claiming from limited queue % needs READ COMMITTED, not %: run pgbus.claim in its own transaction',
            q, current_setting('transaction_isolation')
            USING ERRCODE = 'invalid_transaction_state';
        END IF;
        IF lim.global_concurrency IS NOT NULL THEN
          q_left := least(remaining, lim.global_concurrency
                                     - (SELECT count(*) FROM pgbus.job x
                                         WHERE x.queue = q AND x.state = 'running')::integer);
          CONTINUE WHEN q_left <= 0;
        END IF;
        keyed := true;
      END IF;
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
          IF keyed THEN
            v_window := q_left * 4 + 32;
            LOOP
              WITH win AS (
                SELECT c.id, c.run_at, c.concurrency_key
                  FROM pgbus.job c
                 WHERE c.queue = q
                   AND c.priority = prio
                   AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                 ORDER BY c.priority, c.run_at, c.id
                 LIMIT v_window
              ), ranked AS (
                SELECT w.id, w.run_at, w.concurrency_key,
                       row_number() OVER (PARTITION BY w.concurrency_key ORDER BY w.run_at, w.id) AS n
                  FROM win w
              ), busy AS (
                SELECT x.concurrency_key, count(*) AS n
                  FROM pgbus.job x
                 WHERE x.queue = q AND x.state = 'running' AND x.concurrency_key IS NOT NULL
                 GROUP BY x.concurrency_key
              ), ok AS (
                SELECT k.id, k.run_at
                  FROM ranked k LEFT JOIN busy b ON b.concurrency_key = k.concurrency_key
                 WHERE k.concurrency_key IS NULL
                    OR k.n + coalesce(b.n, 0) <= coalesce(lim.key_concurrency, 1)
                 ORDER BY k.run_at, k.id
                 LIMIT q_left
              )
              SELECT (SELECT count(*) FROM win),
                     coalesce((SELECT array_agg(o.id ORDER BY o.run_at, o.id) FROM ok o), '{}')
                INTO v_seen, v_ids;
              EXIT WHEN cardinality(v_ids) >= q_left OR v_seen < v_window OR v_window >= 10000;
              v_window := least(v_window * 4, 10000);
            END LOOP;
            EXIT WHEN cardinality(v_ids) = 0;
          END IF;
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
                 AND (NOT keyed OR c.id = ANY (v_ids))
               ORDER BY c.priority, c.run_at, c.id
               LIMIT q_left
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
              q_left := q_left - 1;
              RETURN NEXT r.job;
            END IF;
          END LOOP;
          EXIT WHEN buried = 0 OR q_left <= 0;
        END LOOP;
        EXIT WHEN q_left <= 0;
      END LOOP;
    END LOOP;
  END $_$;

--
-- Name: enqueue(text, jsonb, timestamp with time zone, integer, integer, text, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
  DECLARE
    v_id bigint;
  BEGIN
    SELECT e.id INTO v_id
      FROM pgbus.enqueue_job(enqueue.queue, enqueue.payload, enqueue.run_at, enqueue.priority,
                             enqueue.max_attempts, enqueue.unique_key,
                             enqueue.trace_parent, enqueue.trace_state,
                             enqueue.concurrency_key) e;
    RETURN v_id;
  END $$;

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, integer, integer, text, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_job(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text, OUT id bigint, OUT duplicate boolean) RETURNS record
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
    IF enqueue_job.concurrency_key IS NOT NULL THEN
      PERFORM pgbus.check_concurrency_key(v_queue, enqueue_job.concurrency_key);
    END IF;
    LOOP
      -- The inference predicate is job_unique_idx's, word for word but for the operator, which
      -- is the one the index was built with (enum_eq), named so that no look-alike can stand in.
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at, unique_key,
                                  trace_parent, trace_state, concurrency_key)
      VALUES (v_queue, v_state, enqueue_job.priority, enqueue_job.payload,
              enqueue_job.max_attempts, v_run_at, enqueue_job.unique_key,
              enqueue_job.trace_parent, enqueue_job.trace_state, enqueue_job.concurrency_key)
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
-- Name: enqueue_many(text[], jsonb[], timestamp with time zone[], integer[], integer[], text[], text[], text[], text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_many(queues text[], payloads jsonb[], run_ats timestamp with time zone[], priorities integer[], max_attempts integer[], unique_keys text[] DEFAULT NULL::text[], trace_parents text[] DEFAULT NULL::text[], trace_states text[] DEFAULT NULL::text[], concurrency_keys text[] DEFAULT NULL::text[]) RETURNS SETOF bigint
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
    IF concurrency_keys IS NOT NULL THEN
      PERFORM pgbus.check_concurrency_key(pgbus.queue(queues[i]), concurrency_keys[i])
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
    RETURN QUERY
      WITH input AS (
        SELECT pgbus.queue(t.q) AS queue, t.p AS payload, coalesce(t.r, now()) AS run_at,
               t.pr AS priority, t.m AS max_attempts, t.ord,
               trace_parents[t.ord] AS trace_parent, trace_states[t.ord] AS trace_state,
               concurrency_keys[t.ord] AS concurrency_key
          FROM unnest(queues, payloads, run_ats, priorities, max_attempts)
               WITH ORDINALITY AS t(q, p, r, pr, m, ord)
      ), inserted AS (
        INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, run_at,
                               trace_parent, trace_state, concurrency_key)
        SELECT i.queue,
               CASE WHEN i.run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
               i.priority, i.payload, i.max_attempts, i.run_at, i.trace_parent, i.trace_state,
               i.concurrency_key
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
-- Name: queue_limit_clear(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_limit_clear(queue text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_limit_clear.queue);
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = v_queue) THEN
      RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM pgbus.job j
                WHERE j.queue = v_queue AND j.concurrency_key IS NOT NULL
                  AND j.state IN ('available', 'scheduled', 'retryable', 'running')) THEN
      PERFORM pgbus.queue_limit_set(v_queue, NULL, NULL, NULL);
      RETURN false;
    END IF;
    DELETE FROM pgbus.queue_limit l WHERE l.queue = v_queue;
    PERFORM pgbus.notify(v_queue, now());
    RETURN true;
  END $$;

--
-- Name: queue_limit_set(text, integer, integer, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_limit_set(queue text, global_concurrency integer DEFAULT NULL::integer, key_concurrency integer DEFAULT NULL::integer, updated_by text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  #variable_conflict use_column
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_limit_set.queue);
  BEGIN
    IF queue_limit_set.global_concurrency NOT BETWEEN 1 AND 100000 THEN
      RAISE EXCEPTION 'pgbus: global concurrency % for queue % is invalid: use 1 to 100000 running jobs, or NULL for no limit',
        queue_limit_set.global_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.key_concurrency NOT BETWEEN 1 AND 100000 THEN
      RAISE EXCEPTION 'pgbus: key concurrency % for queue % is invalid: use 1 to 100000 running jobs per key, or NULL for 1',
        queue_limit_set.key_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO pgbus.queue_limit AS l (queue, global_concurrency, key_concurrency, updated_by)
    VALUES (v_queue, queue_limit_set.global_concurrency, queue_limit_set.key_concurrency,
            coalesce(queue_limit_set.updated_by, current_user::text))
    ON CONFLICT (queue) DO UPDATE
      SET global_concurrency = excluded.global_concurrency,
          key_concurrency = excluded.key_concurrency,
          updated_at = now(),
          updated_by = excluded.updated_by
      WHERE (l.global_concurrency, l.key_concurrency)
            IS DISTINCT FROM (excluded.global_concurrency, excluded.key_concurrency);
    -- A raised limit frees capacity now: wake the queue's workers at commit.
    PERFORM pgbus.notify(v_queue, now());
  END $$;

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
-- Name: cron; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.cron (
    name text NOT NULL,
    last_run_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
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
-- Name: queue_limit; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_limit (
    queue pgbus.queue_name NOT NULL,
    global_concurrency integer,
    key_concurrency integer,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text,
    CONSTRAINT queue_limit_global_chk CHECK (((global_concurrency >= 1) AND (global_concurrency <= 100000))),
    CONSTRAINT queue_limit_key_chk CHECK (((key_concurrency >= 1) AND (key_concurrency <= 100000)))
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
-- Name: schedule; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.schedule (
    name text NOT NULL,
    cron text NOT NULL,
    zone text NOT NULL,
    queue pgbus.queue_name NOT NULL,
    payload jsonb NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    max_attempts integer,
    misfire text DEFAULT 'run_once'::text NOT NULL,
    catch_up_limit integer,
    paused boolean DEFAULT false NOT NULL,
    last_run_at timestamp with time zone,
    next_run_at timestamp with time zone,
    source text NOT NULL,
    revision bigint DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text DEFAULT CURRENT_USER NOT NULL,
    CONSTRAINT schedule_catch_up_chk CHECK ((((misfire = 'catch_up'::text) = (catch_up_limit IS NOT NULL)) AND ((catch_up_limit >= 1) AND (catch_up_limit <= 1000)))),
    CONSTRAINT schedule_cron_chk CHECK (((length(cron) >= 1) AND (length(cron) <= 200))),
    CONSTRAINT schedule_max_attempts_chk CHECK (((max_attempts >= 1) AND (max_attempts <= 1000))),
    CONSTRAINT schedule_misfire_chk CHECK ((misfire = ANY (ARRAY['skip'::text, 'run_once'::text, 'catch_up'::text]))),
    CONSTRAINT schedule_name_chk CHECK ((name ~ '^[A-Za-z][A-Za-z0-9_-]{0,62}$'::text)),
    CONSTRAINT schedule_payload_chk CHECK (((jsonb_typeof(payload) <> 'null'::text) AND (octet_length((payload)::text) <= 65536))),
    CONSTRAINT schedule_priority_chk CHECK (((priority >= '-100'::integer) AND (priority <= 100))),
    CONSTRAINT schedule_source_chk CHECK ((source = ANY (ARRAY['config'::text, 'api'::text]))),
    CONSTRAINT schedule_updated_by_chk CHECK (((length(updated_by) >= 1) AND (length(updated_by) <= 255))),
    CONSTRAINT schedule_zone_chk CHECK (((length(zone) >= 1) AND (length(zone) <= 64)))
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
-- Name: cron cron_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.cron
    ADD CONSTRAINT cron_pkey PRIMARY KEY (name);

--
-- Name: job job_concurrency_key_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job
    ADD CONSTRAINT job_concurrency_key_chk CHECK (((length(concurrency_key) >= 1) AND (length(concurrency_key) <= 255))) NOT VALID;

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
-- Name: queue_limit queue_limit_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_limit
    ADD CONSTRAINT queue_limit_pkey PRIMARY KEY (queue);

--
-- Name: queue_pause queue_pause_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_pause
    ADD CONSTRAINT queue_pause_pkey PRIMARY KEY (queue);

--
-- Name: schedule schedule_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.schedule
    ADD CONSTRAINT schedule_pkey PRIMARY KEY (name);

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
-- Name: job_due_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_due_idx ON pgbus.job USING btree (queue, run_at) WHERE (state = ANY (ARRAY['available'::pgbus.job_state, 'scheduled'::pgbus.job_state, 'retryable'::pgbus.job_state]));

--
-- Name: job_finalized_queue_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_finalized_queue_idx ON pgbus.job USING btree (state, finalized_at) INCLUDE (queue) WHERE (state = ANY (ARRAY['completed'::pgbus.job_state, 'dead'::pgbus.job_state, 'cancelled'::pgbus.job_state]));

--
-- Name: job_key_running_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_key_running_idx ON pgbus.job USING btree (queue, concurrency_key) WHERE ((state = 'running'::pgbus.job_state) AND (concurrency_key IS NOT NULL));

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
-- Name: schedule_due_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX schedule_due_idx ON pgbus.schedule USING btree (next_run_at) WHERE (NOT paused);

--
-- Name: TABLE setting; Type: ACL; Schema: pgbus; Owner: -
--

GRANT SELECT ON TABLE pgbus.setting TO PUBLIC;

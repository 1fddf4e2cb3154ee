-- The pgbus schema as a fresh install has it: every type, table, index and function, current.
-- Generated from the migrations by tools/dump-schema (pg_dump --schema-only); do not edit.
-- SchemaDumpTest fails when this file and the migrations disagree, or when it does not load
-- into an empty database in one pass (psql -v ON_ERROR_STOP=1 -f). See docs/schema.md.

SET check_function_bodies = false;
SET search_path = '';

--
-- Name: pgbus; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA pgbus;

--
-- Name: job_cancel_attempt; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_cancel_attempt AS integer;

--
-- Name: job_concurrency_key; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_concurrency_key AS text;

--
-- Name: job_correlation_id; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_correlation_id AS text;

--
-- Name: job_enqueued_by; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_enqueued_by AS text;

--
-- Name: job_max_attempts; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_max_attempts AS integer;

--
-- Name: job_priority; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_priority AS smallint;

--
-- Name: job_progress; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_progress AS jsonb;

--
-- Name: job_result; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_result AS jsonb;

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
-- Name: job_unique_key; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.job_unique_key AS text;

--
-- Name: queue_name; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.queue_name AS text
	CONSTRAINT queue_name_check CHECK (((VALUE ~ '^[a-z][a-z0-9_]*$'::text) AND (length(VALUE) <= 48)));

--
-- Name: trace_parent; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.trace_parent AS text;

--
-- Name: trace_state; Type: DOMAIN; Schema: pgbus; Owner: -
--

CREATE DOMAIN pgbus.trace_state AS text;

--
-- Name: actor(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.actor() RETURNS text
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$ SELECT coalesce(nullif(current_setting('pgbus.principal', true), ''), session_user::text) $$;

--
-- Name: cancel_workflow(bigint, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.cancel_workflow(workflow_id bigint, actor text DEFAULT NULL::text, OUT known boolean, OUT cancelled integer, OUT stopping integer) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_actor text := coalesce(nullif(cancel_workflow.actor, ''), pgbus.actor());
    v_linked bigint[];
  BEGIN
    UPDATE pgbus.workflow w SET cancelled_at = now(), cancelled_by = v_actor
     WHERE w.id = cancel_workflow.workflow_id;
    known := FOUND;
    cancelled := 0;
    stopping := 0;
    IF NOT known THEN
      RETURN;
    END IF;
    WITH waiting AS (
      UPDATE pgbus.job j
         SET state = 'cancelled', finalized_at = now(),
             errors = jsonb_build_array(jsonb_build_object(
                        'attempt', j.attempt, 'at', now(),
                        'error', 'workflow ' || cancel_workflow.workflow_id || ' cancelled by ' || v_actor))
                      || j.errors
        FROM pgbus.workflow_job m
       WHERE m.workflow_id = cancel_workflow.workflow_id AND j.id = m.job_id
         AND j.state IN ('scheduled', 'available', 'retryable')
      RETURNING j.id, j.linked)
    SELECT count(*), array_agg(x.id ORDER BY x.id) FILTER (WHERE x.linked)
      INTO cancelled, v_linked
      FROM waiting x;
    WITH running AS (
      UPDATE pgbus.job j
         SET cancel_attempt = j.attempt
        FROM pgbus.workflow_job m
       WHERE m.workflow_id = cancel_workflow.workflow_id AND j.id = m.job_id
         AND j.state = 'running'
      RETURNING j.id, j.attempt)
    SELECT count(pg_notify('pgbus-cancel', r.id::text || ':' || r.attempt::text))
      INTO stopping
      FROM running r;
    INSERT INTO pgbus.audit (actor, action, queue, detail)
    VALUES (v_actor, 'workflow_cancel', '*',
            jsonb_build_object('workflow', cancel_workflow.workflow_id, 'cancelled', cancelled,
                               'stopping', stopping));
    IF v_linked IS NOT NULL THEN
      PERFORM pgbus.job_finished(v_linked);
    END IF;
  END $$;

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
    IF pg_catalog.pg_column_size(check_payload.payload) > v_limit / 6
       OR pg_catalog.pg_column_compression(check_payload.payload) IS NOT NULL THEN
      v_bytes := pg_catalog.octet_length(check_payload.payload::text);
      IF v_bytes > v_limit THEN
        RAISE EXCEPTION 'payload for queue ''%'' is % bytes, over the limit of % bytes: store large data in your own table and enqueue its key, or raise pgbus.max-payload-bytes',
          check_payload.queue, v_bytes, v_limit
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END IF;
  END $$;

--
-- Name: check_predicate(text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_predicate(node text, parent text, predicate text) RETURNS jsonpath
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
  DECLARE
    v_path jsonpath;
    v_answer jsonb;
  BEGIN
    IF predicate IS NULL OR btrim(predicate) = '' THEN
      RAISE EXCEPTION 'pgbus: the result edge from node % to node % has no predicate: give an SQL/JSON path predicate such as $.approved == true', parent, node
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF length(predicate) > 1000 THEN
      RAISE EXCEPTION 'pgbus: the predicate of the edge from node % to node % is % characters long: use at most 1000', parent, node, length(predicate)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    BEGIN
      v_path := predicate::jsonpath;
      v_answer := jsonb_path_query_array('{}'::jsonb, v_path, '{}'::jsonb, true);
    EXCEPTION WHEN OTHERS THEN
      RAISE EXCEPTION 'pgbus: predicate ''%'' of the edge from node % to node % is not a valid SQL/JSON path (%): write a predicate such as $.approved == true', predicate, parent, node, SQLERRM
        USING ERRCODE = 'invalid_parameter_value';
    END;
    IF jsonb_array_length(v_answer) <> 1 OR jsonb_typeof(v_answer -> 0) NOT IN ('boolean', 'null') THEN
      RAISE EXCEPTION 'pgbus: ''%'' on the edge from node % to node % is a path, not a predicate: compare it, as in % == true', predicate, parent, node, predicate
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN v_path;
  END $_$;

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
-- Name: check_sealed(text, jsonb, integer); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_sealed(queue text, payload jsonb, ordinal integer DEFAULT NULL::integer) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
  BEGIN
    IF check_sealed.payload IS NULL
       OR check_sealed.payload::text !~ '^\{"pgbus\.enc": "pgbus\.enc\.v1:[A-Za-z0-9._-]{1,32}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+"\}$' THEN
      RAISE EXCEPTION 'pgbus: queue % encrypts its payloads, and the payload% is plaintext: SQL has no key and cannot encrypt; enqueue through the Java API (JobQueue, or `pgbus enqueue` with the keys), which seals it, or stop encrypting the queue (encrypt=false on the deployment that serves it)',
        check_sealed.queue, coalesce(' ' || check_sealed.ordinal || ' of the batch', '')
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'the deployment sets a queue''s encryption at start (pgbus.queue_encrypt_set)';
    END IF;
  END $_$;

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
-- Name: check_unique_rule(text, text, interval, text[], text[], interval, interval, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_unique_rule(queue text, unique_key text, period interval, states text[], replace text[], debounce interval, max_wait interval, run_at timestamp with time zone) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v text;
  BEGIN
    IF unique_key IS NULL THEN
      RAISE EXCEPTION 'pgbus: enqueue_unique needs a unique key (queue %): pass unique_key, or use pgbus.enqueue for a job without one', queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF period IS NOT NULL AND period <= interval '0' THEN
      RAISE EXCEPTION 'pgbus: unique period % is not positive (queue %, key %): give a period over zero, such as interval ''1 hour'', or NULL for "one waiting or running job"',
        period, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF period > interval '36500 days' THEN
      RAISE EXCEPTION 'pgbus: unique period % is over the limit of 36500 days (queue %, key %): give a shorter period',
        period, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF states IS NOT NULL AND period IS NULL THEN
      RAISE EXCEPTION 'pgbus: unique states % need a period (queue %, key %): give period too, such as interval ''1 day''',
        states, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOREACH v IN ARRAY coalesce(states, '{}') LOOP
      IF v IS NULL OR v NOT IN ('completed', 'dead', 'cancelled', 'scheduled', 'available',
                                'running', 'retryable') THEN
        RAISE EXCEPTION 'pgbus: unique state % is not a job state (queue %, key %): use completed, dead or cancelled (waiting and running jobs always hold the key)',
          coalesce(quote_literal(v), 'NULL'), queue, unique_key USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END LOOP;
    FOREACH v IN ARRAY coalesce(replace, '{}') LOOP
      IF v IS NULL OR v NOT IN ('payload', 'run_at', 'priority') THEN
        RAISE EXCEPTION 'pgbus: replace field % is not one of payload, run_at, priority (queue %, key %)',
          coalesce(quote_literal(v), 'NULL'), queue, unique_key USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END LOOP;
    IF (debounce IS NULL) <> (max_wait IS NULL) THEN
      RAISE EXCEPTION 'pgbus: debounce % needs max_wait % too (queue %, key %): give both, so that the job always runs by max_wait after its first enqueue',
        coalesce(debounce::text, 'NULL'), coalesce(max_wait::text, 'NULL'), queue, unique_key
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF debounce IS NOT NULL THEN
      IF debounce <= interval '0' OR max_wait <= interval '0' THEN
        RAISE EXCEPTION 'pgbus: debounce % and max_wait % must be positive (queue %, key %): give a window over zero, such as interval ''5 seconds''',
          debounce, max_wait, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF debounce > max_wait THEN
        RAISE EXCEPTION 'pgbus: debounce window % is over its max_wait % (queue %, key %): give a window of at most max_wait, or a longer max_wait',
          debounce, max_wait, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF max_wait > interval '36500 days' THEN
        RAISE EXCEPTION 'pgbus: max_wait % is over the limit of 36500 days (queue %, key %): give a shorter one',
          max_wait, queue, unique_key USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF run_at IS NOT NULL OR 'run_at' = ANY (coalesce(replace, '{}')) THEN
        RAISE EXCEPTION 'pgbus: debounce sets run_at itself (queue %, key %): drop run_at % (and run_at from replace), or enqueue without debounce',
          queue, unique_key, coalesce(run_at::text, 'NULL') USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END IF;
  END $$;

--
-- Name: check_workflow(text, jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.check_workflow(name text, nodes jsonb) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_n integer;
    v_names text[];
    v_dup text;
    n record;
    e record;
    v_order text[] := '{}';
    v_left text[];
    v_ready text[];
    v_cycle record;
  BEGIN
    IF name IS NULL OR length(name) NOT BETWEEN 1 AND 200 OR name ~ '[[:cntrl:]]' THEN
      RAISE EXCEPTION 'pgbus: workflow name % must be 1 to 200 printable characters: name the work, for example order-42', coalesce(quote_literal(name), 'NULL')
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF nodes IS NULL OR jsonb_typeof(nodes) <> 'array' THEN
      RAISE EXCEPTION 'pgbus: the nodes of workflow % must be a JSON array of objects, not %', name, coalesce(jsonb_typeof(nodes), 'NULL')
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    v_n := jsonb_array_length(nodes);
    IF v_n = 0 OR v_n > 1000 THEN
      RAISE EXCEPTION 'pgbus: workflow % has % nodes: a workflow has 1 to 1000 nodes; split a larger one, or let a node fan out from its handler', name, v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    FOR n IN SELECT x.node, x.ord FROM jsonb_array_elements(nodes) WITH ORDINALITY AS x(node, ord) LOOP
      IF jsonb_typeof(n.node) <> 'object' OR jsonb_typeof(n.node -> 'node') IS DISTINCT FROM 'string'
         OR length(n.node ->> 'node') NOT BETWEEN 1 AND 100 OR (n.node ->> 'node') ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'pgbus: node % of workflow % has no valid name (%): give each node "node", 1 to 100 printable characters', n.ord, name, left((n.node -> 'node')::text, 120)
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END LOOP;
    v_names := ARRAY(SELECT x ->> 'node' FROM jsonb_array_elements(nodes) x);
    SELECT t.v INTO v_dup FROM unnest(v_names) t(v) GROUP BY t.v HAVING count(*) > 1 LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'pgbus: workflow % names node % twice: give each node its own name', name, quote_literal(v_dup)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR n IN SELECT x ->> 'node' AS node, coalesce(x -> 'after', '[]') AS after
               FROM jsonb_array_elements(nodes) x LOOP
      IF jsonb_typeof(n.after) <> 'array' THEN
        RAISE EXCEPTION 'pgbus: the edges ("after") of node % must be an array', quote_literal(n.node)
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
      IF jsonb_array_length(n.after) > 100 THEN
        RAISE EXCEPTION 'pgbus: node % of workflow % has % parents, over the limit of 100: join them through a node of their own', quote_literal(n.node), name, jsonb_array_length(n.after)
          USING ERRCODE = 'program_limit_exceeded';
      END IF;
      FOR e IN SELECT a ->> 'node' AS parent, coalesce(a ->> 'kind', 'success') AS kind,
                      coalesce(a ->> 'onFailure', 'cancel') AS on_failure, a ->> 'predicate' AS predicate
                 FROM jsonb_array_elements(n.after) a LOOP
        IF e.parent IS NULL OR NOT e.parent = ANY (v_names) THEN
          RAISE EXCEPTION 'pgbus: node % of workflow % waits on unknown node %: name a node of this workflow', quote_literal(n.node), name, coalesce(quote_literal(e.parent), 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF e.kind NOT IN ('success', 'failure', 'result') THEN
          RAISE EXCEPTION 'pgbus: the edge from node % to node % has kind %: use success, failure or result', quote_literal(e.parent), quote_literal(n.node), quote_literal(e.kind)
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF e.on_failure NOT IN ('hold', 'cancel') THEN
          RAISE EXCEPTION 'pgbus: the edge from node % to node % has onFailure %: use hold or cancel', quote_literal(e.parent), quote_literal(n.node), quote_literal(e.on_failure)
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        IF e.kind = 'result' THEN
          PERFORM pgbus.check_predicate(n.node, e.parent, e.predicate);
        ELSIF e.predicate IS NOT NULL THEN
          RAISE EXCEPTION 'pgbus: the % edge from node % to node % takes no predicate: make it a result edge', e.kind, quote_literal(e.parent), quote_literal(n.node)
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
      END LOOP;
      SELECT a ->> 'node' AS parent INTO v_cycle FROM jsonb_array_elements(n.after) a
       GROUP BY a ->> 'node' HAVING count(*) > 1 LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'pgbus: node % of workflow % has two edges from node %: keep one edge per parent', quote_literal(n.node), name, quote_literal(v_cycle.parent)
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
    END LOOP;
    -- Kahn's order: take the nodes whose parents are all taken, until none is left; the nodes
    -- left over lie on a cycle (or below one), and the message names an edge of it.
    v_left := v_names;
    LOOP
      v_ready := ARRAY(
        SELECT x ->> 'node' FROM jsonb_array_elements(nodes) x
         WHERE (x ->> 'node') = ANY (v_left)
           AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(x -> 'after', '[]')) a
                            WHERE (a ->> 'node') = ANY (v_left)));
      EXIT WHEN cardinality(v_ready) = 0;
      v_order := v_order || v_ready;
      v_left := ARRAY(SELECT l FROM unnest(v_left) l WHERE NOT l = ANY (v_ready));
    END LOOP;
    IF cardinality(v_left) > 0 THEN
      SELECT a ->> 'node' AS parent, x ->> 'node' AS child INTO v_cycle
        FROM jsonb_array_elements(nodes) x, jsonb_array_elements(coalesce(x -> 'after', '[]')) a
       WHERE (x ->> 'node') = ANY (v_left) AND (a ->> 'node') = ANY (v_left)
       LIMIT 1;
      RAISE EXCEPTION 'pgbus: workflow % has a cycle through the edge from node % to node % (nodes on or below it: %): a workflow is a DAG, remove an edge of the cycle', name, quote_literal(v_cycle.parent), quote_literal(v_cycle.child), v_left
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN v_order;
  END $$;

--
-- Name: job; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job (
    id bigint NOT NULL,
    queue pgbus.queue_name NOT NULL,
    state pgbus.job_state DEFAULT 'available'::pgbus.job_state NOT NULL,
    priority pgbus.job_priority DEFAULT 0 NOT NULL,
    payload jsonb NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    max_attempts pgbus.job_max_attempts DEFAULT 25 NOT NULL,
    run_at timestamp with time zone DEFAULT now() NOT NULL,
    attempted_at timestamp with time zone,
    attempted_by text,
    lease_expires_at timestamp with time zone,
    errors jsonb DEFAULT '[]'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    finalized_at timestamp with time zone,
    unique_key pgbus.job_unique_key,
    trace_parent pgbus.trace_parent,
    trace_state pgbus.trace_state,
    enqueued_by pgbus.job_enqueued_by DEFAULT COALESCE(NULLIF(current_setting('pgbus.principal'::text, true), ''::text), (SESSION_USER)::text),
    correlation_id pgbus.job_correlation_id DEFAULT NULLIF(current_setting('pgbus.correlation_id'::text, true), ''::text),
    cancel_attempt pgbus.job_cancel_attempt,
    progress pgbus.job_progress,
    result pgbus.job_result,
    concurrency_key pgbus.job_concurrency_key,
    batch_id bigint,
    linked boolean DEFAULT false NOT NULL,
    lane bigint,
    attempt_base integer DEFAULT 0 NOT NULL,
    start_by timestamp with time zone,
    run_as text DEFAULT NULLIF(current_setting('pgbus.run_as'::text, true), ''::text)
);

--
-- Name: claim(text[], integer, text, interval, integer, text[], integer[], timestamp with time zone[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim(queues text[], max_jobs integer, worker text, lease interval, lanes integer DEFAULT NULL::integer, floor_queues text[] DEFAULT NULL::text[], floor_priorities integer[] DEFAULT NULL::integer[], floor_run_ats timestamp with time zone[] DEFAULT NULL::timestamp with time zone[]) RETURNS SETOF pgbus.job
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    AS $$
  DECLARE
    v_id bigint;
  BEGIN
    FOREACH v_id IN ARRAY ARRAY(SELECT c.job_id
                                  FROM pgbus.claim_jobs(queues, max_jobs, worker, lease, lanes,
                                                        floor_queues, floor_priorities,
                                                        floor_run_ats) c) LOOP
      RETURN QUERY SELECT j.* FROM pgbus.job j WHERE j.id = v_id;
    END LOOP;
  END $$;

--
-- Name: claim_budget(text, integer, integer, integer, integer, boolean); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_budget(q text, remaining integer, max_jobs integer, lanes integer, per_lane integer, holding boolean, OUT locked boolean, OUT take integer, OUT take_lanes integer, OUT rate_left integer, OUT window_start timestamp with time zone, OUT window_length interval, OUT key_concurrency integer, OUT key_fifo boolean, OUT key_fifo_skip_dead boolean) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    lim record;
    has_row boolean;
  BEGIN
    -- Twice: without a lock first, so that a queue at its limit is skipped with no lock taken; then
    -- under the row lock, counted again with that statement's fresh snapshot, for the answer.
    FOR pass IN 1..2 LOOP
      take := remaining;
      take_lanes := coalesce(lanes, 1);
      rate_left := NULL;
      IF pass = 1 THEN
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q;
        has_row := FOUND;
      ELSIF NOT holding THEN
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE;
        has_row := FOUND;
      ELSE
        SELECT l.* INTO lim FROM pgbus.queue_limit l WHERE l.queue = q FOR UPDATE SKIP LOCKED;
        has_row := FOUND;
        IF NOT has_row AND EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = q) THEN
          PERFORM pgbus.notify(q, now());  -- another claim holds it: come back after its commit
          take := 0;
          RETURN;
        END IF;
      END IF;
      locked := has_row AND pass = 2;
      IF NOT has_row THEN
        RETURN;  -- no row, or it went: the queue is not limited now
      END IF;
      IF pass = 1 AND current_setting('transaction_isolation') <> 'read committed' THEN
        RAISE EXCEPTION 'pgbus: claiming from limited queue % needs READ COMMITTED, not %: run pgbus.claim in its own transaction',
          q, current_setting('transaction_isolation')
          USING ERRCODE = 'invalid_transaction_state';
      END IF;
      IF lim.global_concurrency IS NOT NULL THEN
        take_lanes := least(coalesce(lanes, max_jobs),
                            lim.global_concurrency - pgbus.claim_executions(q));
        IF take_lanes <= 0 THEN
          take := 0;
          RETURN;
        END IF;
        take := least(remaining, take_lanes * per_lane);
      END IF;
      IF lim.rate_limit IS NOT NULL THEN
        window_start := pgbus.rate_window_start(lim.rate_window);
        rate_left := pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count, window_start);
        IF rate_left <= 0 THEN
          -- Come back when the window allows: the fleet's capsules set an alarm for then.
          PERFORM pgbus.notify(q, CASE WHEN lim.rate_window_start > window_start THEN now()
                                      ELSE window_start + lim.rate_window END);
          take := 0;
          RETURN;
        END IF;
        take := least(take, rate_left);
      END IF;
    END LOOP;
    take_lanes := least(take_lanes, coalesce(lanes, 1));
    window_length := lim.rate_window;
    key_concurrency := lim.key_concurrency;
    key_fifo := lim.key_fifo;
    key_fifo_skip_dead := lim.key_fifo_skip_dead;
  END $$;

--
-- Name: claim_executions(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_executions(q text) RETURNS integer
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT (count(DISTINCT x.lane) + count(*) FILTER (WHERE x.lane IS NULL))::integer
      FROM pgbus.job x
     WHERE x.queue = q AND x.state = 'running'
  $$;

--
-- Name: claim_fair(text, smallint, integer, integer, boolean, boolean); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_fair(q text, prio smallint, take integer, key_limit integer, fifo boolean, fifo_skip_dead boolean) RETURNS bigint[]
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
  DECLARE
    v_weights jsonb;
    v_clock double precision;
    v_ids bigint[] := '{}';
    v_keys text[] := '{}';     -- the key of each id dealt so far
    v_more bigint[];
    v_more_keys text[];
    v_exact boolean := false;  -- second pass: every tenant's candidates up to its room
  BEGIN
    -- The common case without reading every tenant: equal weights, and at least `take` tenants
    -- at the clock (no pass ahead of it) whose first due job is among the level's next 8 x take
    -- jobs in claim order. Each of those tenants' first candidate finishes at clock + 1, before
    -- any other candidate (a tenant ahead of the clock finishes later, and a second job of a
    -- tenant at clock + 2), so the statement below would deal exactly these: the `take` oldest
    -- such first jobs, one per tenant, and write the same passes. It reads about a claim's worth
    -- of rows where the statement below probes every tenant with waiting jobs (150 ms a claim at
    -- 10,000 tenants, docs/performance.md); when it finds fewer, that statement decides.
    SELECT l.fair_weights, l.fair_clock INTO v_weights, v_clock
      FROM pgbus.queue_limit l WHERE l.queue = q;
    IF take > 0 AND (v_weights IS NULL OR v_weights = '{}'::jsonb)
       -- More tenants wait than the claim takes (take + 1 probes of the skip scan below): with
       -- fewer, the tenants are all ahead of the clock after every other claim, and the walk
       -- would only add its reads to that statement's (+14% a claim at 10 tenants).
       AND (SELECT count(*) FROM pgbus.claim_fair_tenants(q, take + 1)) > take THEN
      WITH walk AS MATERIALIZED (
        SELECT c.id, c.run_at, c.concurrency_key::text AS k, c.start_by
          FROM pgbus.job c
         WHERE c.queue = q
           AND c.priority = prio
           AND c.state IN ('available', 'scheduled', 'retryable')
           AND c.run_at <= now()
         ORDER BY c.priority, c.run_at, c.id
         LIMIT take * 8
      ), heads AS MATERIALIZED (
        -- Each tenant's first job in its range as the statement below reads it (a prefix of the
        -- level in the same order holds it), and that statement's FIFO test of it.
        SELECT DISTINCT ON (w.k) w.k, w.id, w.run_at
          FROM walk w
         WHERE w.k IS NOT NULL
           AND (w.start_by IS NULL OR w.start_by > now())
         ORDER BY w.k, w.run_at, w.id
      ), at_clock AS MATERIALIZED (
        SELECT h.k, h.id, h.run_at
          FROM heads h
         WHERE NOT EXISTS (SELECT 1 FROM pgbus.queue_fair_pass p
                            WHERE p.queue = q AND p.tenant = h.k AND p.pass > v_clock)
           AND (NOT fifo OR NOT EXISTS (
                 SELECT 1 FROM pgbus.job o
                  WHERE o.queue = q
                    AND o.concurrency_key = h.k
                    AND o.id < h.id
                    AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                    AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
      ), dealt AS MATERIALIZED (
        SELECT a.k, a.id, a.run_at
          FROM at_clock a
         WHERE (SELECT count(*)
                  FROM (SELECT 1 FROM pgbus.job x
                         WHERE x.queue = q AND x.concurrency_key = a.k AND x.state = 'running'
                         LIMIT CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END) r)
               < CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END
         ORDER BY a.run_at, a.id
         LIMIT take
      )
      SELECT coalesce(array_agg(d.id ORDER BY d.run_at, d.id), '{}'),
             coalesce(array_agg(d.k ORDER BY d.run_at, d.id), '{}')
        INTO v_more, v_more_keys
        FROM dealt d;
      IF cardinality(v_more) = take THEN
        -- What the statement below writes for such a deal: each tenant's pass at clock + 1, the
        -- clock where it is (the deal started there), the rows at or below it gone.
        INSERT INTO pgbus.queue_fair_pass AS p (queue, tenant, pass)
        SELECT q, k.k, v_clock + 1 FROM unnest(v_more_keys) AS k(k)
        ON CONFLICT (queue, tenant) DO UPDATE SET pass = excluded.pass;
        DELETE FROM pgbus.queue_fair_pass p
         WHERE p.queue = q AND p.pass <= v_clock AND p.tenant <> ALL (v_more_keys);
        RETURN v_more;
      END IF;
    END IF;
    LOOP
    SELECT l.fair_weights, l.fair_clock INTO v_weights, v_clock
      FROM pgbus.queue_limit l WHERE l.queue = q;
    WITH tenants(k) AS MATERIALIZED (
      SELECT f.k FROM pgbus.claim_fair_tenants(q, NULL) AS f(k)
    ), shares AS (
      SELECT t.k,
             coalesce((v_weights ->> t.k)::double precision, 1) AS w,
             greatest(coalesce(p.pass, v_clock), v_clock) AS pass,
             CASE WHEN fifo THEN 1 ELSE coalesce(key_limit, 1) END
               - (SELECT count(*) FROM pgbus.job x
                   WHERE x.queue = q AND x.concurrency_key = t.k AND x.state = 'running')
               - (SELECT count(*) FROM unnest(v_keys) AS z(k) WHERE z.k = t.k) AS room
        FROM tenants t
        LEFT JOIN pgbus.queue_fair_pass p ON p.queue = q AND p.tenant = t.k
       WHERE t.k IS NOT NULL
    ), cut AS (
      -- The take-th earliest finish among every tenant's possible candidates: arithmetic on the
      -- shares, no row read. A tenant needs candidates only up to it (its quota below), so a
      -- claim reads about take rows of pgbus.job however many tenants it deals over.
      SELECT max(x.finish) AS finish
        FROM (SELECT s.pass + g.n / s.w AS finish
                FROM shares s
                CROSS JOIN LATERAL generate_series(1, greatest(least(take, s.room), 0)) AS g(n)
               ORDER BY 1
               LIMIT take - cardinality(v_ids)) x
    ), quotas AS (
      SELECT s.k, s.w, s.pass, s.room,
             CASE WHEN v_exact THEN least(take, s.room)
                  ELSE least(take, s.room, floor((x.finish - s.pass) * s.w + 1e-9)::bigint)
             END AS quota
        FROM shares s, cut x
    ), cand AS (
      SELECT s.k, s.pass, j.id, j.run_at, s.pass + j.n / s.w AS finish
        FROM quotas s
        CROSS JOIN LATERAL (
          SELECT c.id, c.run_at, row_number() OVER (ORDER BY c.run_at, c.id) AS n
            FROM pgbus.job c
           WHERE c.queue = q
             AND c.concurrency_key = s.k
             AND c.priority = prio
             AND c.state IN ('available', 'scheduled', 'retryable')
             AND c.run_at <= now()
             AND (c.start_by IS NULL OR c.start_by > now())
             AND c.id <> ALL (v_ids)
           ORDER BY c.priority, c.run_at, c.id
           LIMIT greatest(s.quota, 0)) j
       WHERE s.quota > 0
         -- FIFO: the key's head only, as pgbus.claim_keyed decides.
         AND (NOT fifo OR NOT EXISTS (
               SELECT 1 FROM pgbus.job o
                WHERE o.queue = q
                  AND o.concurrency_key = s.k
                  AND o.id < j.id
                  AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                  AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
    ), dealt AS (
      SELECT d.k, d.pass, d.id, d.run_at, d.finish
        FROM cand d
       ORDER BY d.finish, d.run_at, d.id
       LIMIT take - cardinality(v_ids)
    ), served AS (
      INSERT INTO pgbus.queue_fair_pass AS p (queue, tenant, pass)
      SELECT q, d.k, max(d.finish) FROM dealt d GROUP BY d.k
      ON CONFLICT (queue, tenant) DO UPDATE SET pass = excluded.pass
    ), start AS (
      SELECT min(d.pass) AS pass FROM dealt d
    ), clocked AS (
      UPDATE pgbus.queue_limit l SET fair_clock = x.pass
        FROM start x
       WHERE l.queue = q AND x.pass > l.fair_clock
    ), pruned AS (
      -- Rows at or below the new clock say nothing any more. Not the tenants just served: their
      -- rows are the upsert's (one statement may not change a row twice), and above it.
      DELETE FROM pgbus.queue_fair_pass p
       USING start x
       WHERE p.queue = q AND p.pass <= x.pass
         AND p.tenant <> ALL (ARRAY(SELECT d.k FROM dealt d))
    )
    SELECT coalesce(array_agg(d.id ORDER BY d.finish, d.run_at, d.id), '{}'),
           coalesce(array_agg(d.k ORDER BY d.finish, d.run_at, d.id), '{}')
      INTO v_more, v_more_keys
      FROM dealt d;
    v_ids := v_ids || v_more;
    v_keys := v_keys || v_more_keys;
    -- Short by the quotas: a tenant had fewer due jobs than its quota. Once more, from the passes
    -- just written, with every tenant's candidates up to its room.
    EXIT WHEN v_exact OR cardinality(v_ids) >= take;
    v_exact := true;
    END LOOP;
    IF cardinality(v_ids) < take THEN
      v_ids := v_ids || ARRAY(
        SELECT h.id
          FROM (SELECT c.id, c.concurrency_key
                  FROM pgbus.job c
                 WHERE c.queue = q
                   AND c.priority = prio
                   AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                 ORDER BY c.priority, c.run_at, c.id
                 LIMIT take) h
         WHERE h.concurrency_key IS NULL
         LIMIT take - cardinality(v_ids));
    END IF;
    RETURN v_ids;
  END $$;

--
-- Name: claim_fair_tenants(text, integer); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_fair_tenants(q text, at_most integer) RETURNS SETOF text
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
    AS $$
  BEGIN
    RETURN QUERY
      WITH RECURSIVE tenants(k, n) AS (
        (SELECT c.concurrency_key::text, 1
           FROM pgbus.job c
          WHERE c.queue = q AND c.concurrency_key IS NOT NULL
            AND c.state IN ('available', 'scheduled', 'retryable')
          ORDER BY c.concurrency_key
          LIMIT 1)
        UNION ALL
        SELECT (SELECT c.concurrency_key::text
                  FROM pgbus.job c
                 WHERE c.queue = q AND c.concurrency_key > t.k
                   AND c.state IN ('available', 'scheduled', 'retryable')
                 ORDER BY c.concurrency_key
                 LIMIT 1), t.n + 1
          FROM tenants t
         WHERE t.k IS NOT NULL AND (at_most IS NULL OR t.n < at_most)
      )
      SELECT t.k FROM tenants t WHERE t.k IS NOT NULL;
  END $$;

--
-- Name: claim_jobs(text[], integer, text, interval, integer, text[], integer[], timestamp with time zone[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_jobs(queues text[], max_jobs integer, worker text, lease interval, lanes integer DEFAULT NULL::integer, floor_queues text[] DEFAULT NULL::text[], floor_priorities integer[] DEFAULT NULL::integer[], floor_run_ats timestamp with time zone[] DEFAULT NULL::timestamp with time zone[]) RETURNS TABLE(job_id bigint, job_queue text, job_priority smallint, job_payload jsonb, job_attempt integer, job_max_attempts integer, job_created_at timestamp with time zone, job_run_at timestamp with time zone, job_trace_parent text, job_trace_state text, job_lane bigint, job_attempt_base integer, job_run_as text, job_linked boolean)
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
    b record;            -- a limited queue's budget (pgbus.claim_budget)
    holding boolean := false;  -- this claim holds a limit row (until its commit)
    q_left integer;      -- what this queue may still take
    keyed boolean;       -- the queue counts running jobs per concurrency key
    fair boolean;        -- the queue deals its levels over its tenants (pgbus.claim_fair)
    v_ids bigint[];      -- keyed: the candidates that keep every key within its limit; NULL: no key
    v_buried bigint[];   -- buried linked jobs, reported to their batches and dependents at the end
    v_lanes integer := lanes;        -- NULL: every job a lane of its own (lane NULL)
    v_per_lane integer;              -- jobs per lane the caller asked for, rounded up
    v_taken integer := 0;            -- rows this claim updated so far: the round-robin position
    q_base integer;                  -- the lane this queue's first job goes to
    q_lanes integer;                 -- how many lanes this queue's jobs may use
    q_taken integer;                 -- rows of this queue updated so far
    q_started integer;               -- jobs of this queue claimed (not buried) so far
    v_rate_left integer;             -- rate: starts the window still allows; NULL: no rate limit
    f_levels integer[];              -- floors: the queue's levels that have one, ascending
    f_run_ats timestamptz[];         -- floors: each level's floor
    v_floor timestamptz;             -- the floor of the level being claimed; NULL: none
  BEGIN
    -- The worker id goes into attempted_by, which logs and the console show: as WorkerIds.check in
    -- Java, 1 to 255 characters and no control character (a newline forges a log line; issue #23).
    IF worker IS NULL OR pg_catalog.length(worker) NOT BETWEEN 1 AND 255
       OR worker ~ '[\x01-\x1f\x7f-\x9f\u2028\u2029]' THEN
      RAISE EXCEPTION 'pgbus: the worker id % is invalid: use 1 to 255 characters without control characters (pgbus.worker-id)',
        pg_catalog.quote_literal(pg_catalog.regexp_replace(pg_catalog.left(worker, 80),
                                 '[\x01-\x1f\x7f-\x9f\u2028\u2029]', '?', 'g'))
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- The queue list's limit, as CapsuleConfig.MAX_QUEUES in Java (docs/configuration.md, "Limits").
    IF pg_catalog.cardinality(queues) > 1000 THEN
      RAISE EXCEPTION 'pgbus: a claim of % queues is over the limit of 1000 queues per claim: split them over several capsules', pg_catalog.cardinality(queues)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF v_lanes IS NOT NULL AND (v_lanes NOT BETWEEN 1 AND 65536) THEN
      RAISE EXCEPTION 'pgbus: claim lanes % is invalid: use 1 to 65536, or NULL for a lane per job', v_lanes
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Claim floors (docs/schema.md, "Claim floors"): three arrays of one length, at most one entry
    -- per queue and priority level (1,000 queues x 201 levels).
    IF coalesce(pg_catalog.cardinality(floor_queues), 0) <> coalesce(pg_catalog.cardinality(floor_priorities), 0)
       OR coalesce(pg_catalog.cardinality(floor_queues), 0) <> coalesce(pg_catalog.cardinality(floor_run_ats), 0) THEN
      RAISE EXCEPTION 'pgbus: claim floors need floor_queues, floor_priorities and floor_run_ats of one length, not %, % and %',
        coalesce(pg_catalog.cardinality(floor_queues), 0), coalesce(pg_catalog.cardinality(floor_priorities), 0),
        coalesce(pg_catalog.cardinality(floor_run_ats), 0)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.cardinality(floor_queues) > 201000 THEN
      RAISE EXCEPTION 'pgbus: % claim floors are over the limit of 201000 (1000 queues x 201 priority levels)', pg_catalog.cardinality(floor_queues)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    v_lanes := least(v_lanes, greatest(max_jobs, 1));
    v_per_lane := CASE WHEN v_lanes IS NULL THEN 1 ELSE (max_jobs + v_lanes - 1) / v_lanes END;
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      q_left := remaining;
      q_lanes := coalesce(v_lanes, 1);
      keyed := false;
      v_rate_left := NULL;
      -- The same one probe of the limit row as an EXISTS, which also says whether the queue is
      -- fair (NULL when there is no row).
      SELECT l.fair_key IS NOT NULL INTO fair FROM pgbus.queue_limit l WHERE l.queue = q;
      fair := coalesce(fair, false);
      IF FOUND THEN
        SELECT * INTO b FROM pgbus.claim_budget(q, remaining, max_jobs, v_lanes, v_per_lane, holding);
        holding := holding OR b.locked;  -- held to this claim's commit, also when it takes nothing
        CONTINUE WHEN b.take = 0;
        q_left := b.take;
        q_lanes := b.take_lanes;
        keyed := b.locked;
        fair := fair AND keyed;
        v_rate_left := b.rate_left;
      END IF;
      q_base := v_taken % coalesce(v_lanes, 1);
      q_taken := 0;
      q_started := 0;
      prio := -32768;  -- below any priority (the column's check allows -100..100)
      f_levels := NULL;
      f_run_ats := NULL;
      -- q = ANY (...) is a simple expression (no statement): a queue without a floor pays only
      -- that scan of the array.
      IF floor_queues IS NOT NULL AND NOT keyed AND q = ANY (floor_queues) THEN
        SELECT pg_catalog.array_agg(f.p ORDER BY f.p), pg_catalog.array_agg(f.r ORDER BY f.p)
          INTO f_levels, f_run_ats
          FROM ROWS FROM (pg_catalog.unnest(floor_queues), pg_catalog.unnest(floor_priorities),
                         pg_catalog.unnest(floor_run_ats)) AS f(fq, p, r)
         WHERE f.fq = q AND f.p IS NOT NULL AND f.r IS NOT NULL;
      END IF;
      LOOP
        v_floor := NULL;
        IF f_levels IS NULL THEN
          -- The queue's next priority level with a waiting job, due or not.
          SELECT c.priority INTO prio
            FROM pgbus.job c
           WHERE c.queue = q
             AND c.state IN ('available', 'scheduled', 'retryable')
             AND c.priority > prio
           ORDER BY c.priority
           LIMIT 1;
          EXIT WHEN NOT FOUND;
        ELSE
          SELECT n.level, n.level_floor INTO prio, v_floor
            FROM pgbus.claim_next_level(q, prio, f_levels, f_run_ats) n;
          EXIT WHEN prio IS NULL;
        END IF;
        LOOP
          buried := 0;
          v_ids := NULL;
          IF fair THEN
            v_ids := pgbus.claim_fair(q, prio, q_left, b.key_concurrency, b.key_fifo,
                                      b.key_fifo_skip_dead);
            EXIT WHEN pg_catalog.cardinality(v_ids) = 0;  -- no tenant may start a job now
          ELSIF keyed THEN
            v_ids := pgbus.claim_keyed(q, prio, q_left, b.key_concurrency, b.key_fifo,
                                       b.key_fifo_skip_dead);
            EXIT WHEN pg_catalog.cardinality(v_ids) = 0;  -- every candidate's key is at its limit
          END IF;
          FOR r IN
            WITH picked AS (
              -- Not a fair queue: the level's due jobs in claim order (a fair one: nothing here,
              -- a one-time filter).
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pgbus.job c
               WHERE c.queue = q
                 AND c.priority = prio
                 AND c.state IN ('available', 'scheduled', 'retryable')
                 AND c.run_at <= now()
                 AND c.run_at >= coalesce(v_floor, '-infinity'::timestamptz)
                 -- A start-by deadline (V43) that passed: never claimed, whatever the leader's
                 -- expiry has done yet. A filter on the rows the range scan reads, no index
                 -- condition: NULL for nearly every job, and a late job stays only until the
                 -- leader cancels it.
                 AND (c.start_by IS NULL OR c.start_by > now())
                 -- No window: a keyed job that a skipped lock brought into reach waits for a
                 -- claim that sees it among the first candidates.
                 AND CASE WHEN v_ids IS NOT NULL THEN c.id = ANY (v_ids)
                          WHEN keyed THEN c.concurrency_key IS NULL
                          ELSE true END
                 AND NOT fair
               ORDER BY c.priority, c.run_at, c.id
               LIMIT q_left
               FOR UPDATE SKIP LOCKED
            ), picked_fair AS (
              -- A fair queue: the ids pgbus.claim_fair dealt, each a probe of the primary key
              -- (a nested loop over the array), rechecked under the lock. Planner trap: with the
              -- recheck written as plain conditions (c.queue = q, c.state IN (...), ...), a table
              -- never analyzed makes job_claim_idx's range of the queue look like one row, and
              -- the planner read that range with the ids as a filter: a tenant's job behind
              -- another's backlog of 100,000 was found at the end of that walk. Inside a CASE
              -- they match no index (nor job_claim_idx's predicate), so the primary key is the
              -- only way in. Unordered: only lanes depend on the order.
              SELECT c.id,
                     CASE WHEN pg_column_size(c.payload) > v_limit / 1536
                          THEN octet_length(c.payload::text) END AS bytes
                FROM pg_catalog.unnest(v_ids) AS u(id)
                JOIN pgbus.job c ON c.id = u.id
               WHERE fair
                 AND CASE WHEN c.queue = q
                           AND c.state IN ('available', 'scheduled', 'retryable')
                           AND c.run_at <= now()
                           AND (c.start_by IS NULL OR c.start_by > now()) THEN true
                          ELSE false END
               LIMIT q_left
               FOR UPDATE OF c SKIP LOCKED
            ), numbered AS (
              -- The round-robin position of each row. picked comes out in claim order (the index
              -- scan's), and if a plan ever numbered it otherwise only the lanes' contents would
              -- change, never how many lanes there are.
              SELECT p.id, p.bytes, (row_number() OVER () - 1)::integer AS n
                FROM (SELECT * FROM picked UNION ALL SELECT * FROM picked_fair) p
            ), claimed AS (
              UPDATE pgbus.job j
                 SET state = CASE WHEN p.bytes > v_limit THEN 'dead' ELSE 'running' END::job_state,
                     attempt = j.attempt + 1,
                     attempted_at = now(),
                     attempted_by = worker,
                     lease_expires_at = CASE WHEN p.bytes > v_limit THEN NULL ELSE now() + lease END,
                     lane = CASE WHEN v_lanes IS NULL OR p.bytes > v_limit THEN NULL
                                 ELSE txid_current() * 65536
                                      + (q_base + (q_taken + p.n) % q_lanes) % v_lanes END,
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
                FROM numbered p
               WHERE j.id = p.id
              RETURNING j.id, j.queue::text AS queue, j.priority::smallint AS priority, j.payload,
                        j.attempt, j.max_attempts::integer AS max_attempts, j.created_at, j.run_at,
                        j.trace_parent::text AS trace_parent, j.trace_state::text AS trace_state,
                        j.lane, j.attempt_base, j.run_as, j.linked,
                        p.bytes > v_limit AS oversized)
            SELECT c.id, c.queue, c.priority, c.payload, c.attempt, c.max_attempts, c.created_at,
                   c.run_at, c.trace_parent, c.trace_state, c.lane, c.attempt_base, c.run_as,
                   c.linked, coalesce(c.oversized, false) AS oversized
              FROM claimed c
             ORDER BY c.priority, c.run_at, c.id
          LOOP
            v_taken := v_taken + 1;
            q_taken := q_taken + 1;
            IF r.oversized THEN
              buried := buried + 1;
              IF r.linked THEN
                v_buried := v_buried || r.id;
              END IF;
            ELSE
              remaining := remaining - 1;
              q_left := q_left - 1;
              q_started := q_started + 1;
              job_id := r.id;
              job_queue := r.queue;
              job_priority := r.priority;
              job_payload := r.payload;
              job_attempt := r.attempt;
              job_max_attempts := r.max_attempts;
              job_created_at := r.created_at;
              job_run_at := r.run_at;
              job_trace_parent := r.trace_parent;
              job_trace_state := r.trace_state;
              job_lane := r.lane;
              job_attempt_base := r.attempt_base;
              job_run_as := r.run_as;
              job_linked := r.linked;
              RETURN NEXT;
            END IF;
          END LOOP;
          EXIT WHEN buried = 0 OR q_left <= 0;
        END LOOP;
        EXIT WHEN q_left <= 0;
      END LOOP;
      IF v_rate_left IS NOT NULL AND q_started > 0 THEN
        -- Under the row lock: count this claim's starts in its window.
        UPDATE pgbus.queue_limit l
           SET rate_count = CASE WHEN l.rate_window_start = b.window_start THEN l.rate_count
                                 ELSE 0 END + q_started,
               rate_window_start = b.window_start
         WHERE l.queue = q;
        IF q_started >= v_rate_left THEN
          PERFORM pgbus.notify(q, b.window_start + b.window_length);  -- the window is spent
        END IF;
      END IF;
    END LOOP;
    IF v_buried IS NOT NULL THEN
      PERFORM pgbus.job_finished(v_buried);
    END IF;
  END $_$;

--
-- Name: claim_keyed(text, smallint, integer, integer, boolean, boolean); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_keyed(q text, prio smallint, take integer, key_limit integer, fifo boolean, fifo_skip_dead boolean) RETURNS bigint[]
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET enable_sort TO 'off'
    SET jit TO 'off'
    AS $$
  DECLARE
    v_window integer := take * 4 + 32;
    v_seen integer;
    v_ids bigint[];
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM (
                     SELECT c.concurrency_key
                       FROM pgbus.job c
                      WHERE c.queue = q
                        AND c.priority = prio
                        AND c.state IN ('available', 'scheduled', 'retryable')
                        AND c.run_at <= now()
                      ORDER BY c.priority, c.run_at, c.id
                      LIMIT take) h
                    WHERE h.concurrency_key IS NOT NULL) THEN
      RETURN NULL;
    END IF;
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
            OR (NOT fifo
                AND k.n + coalesce(b.n, 0) <= coalesce(key_limit, 1))
            -- FIFO: the key's head only, and only while none of its jobs runs. An older
            -- job of the key that waits (due or not: a retry keeps its place) or lies
            -- dead (unless skipped) holds it back, in any priority level.
            OR (fifo AND b.n IS NULL
                AND NOT EXISTS (
                      SELECT 1 FROM pgbus.job o
                       WHERE o.queue = q
                         AND o.concurrency_key = k.concurrency_key
                         AND o.id < k.id
                         AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                         AND (o.state <> 'dead' OR NOT fifo_skip_dead)))
         ORDER BY k.run_at, k.id
         LIMIT take
      )
      SELECT (SELECT count(*) FROM win),
             coalesce((SELECT array_agg(o.id ORDER BY o.run_at, o.id) FROM ok o), '{}')
        INTO v_seen, v_ids;
      EXIT WHEN cardinality(v_ids) >= take OR v_seen < v_window OR v_window >= 10000;
      v_window := least(v_window * 4, 10000);
    END LOOP;
    RETURN v_ids;
  END $$;

--
-- Name: claim_next_level(text, smallint, integer[], timestamp with time zone[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.claim_next_level(q text, after smallint, levels integer[], floors timestamp with time zone[], OUT level smallint, OUT level_floor timestamp with time zone) RETURNS record
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET enable_sort TO 'off'
    SET jit TO 'off'
    AS $$
  DECLARE
    i integer := 1;
    next_floored integer;  -- the next level above after that has a floor, or 32767 when none has
  BEGIN
    LOOP
      WHILE i <= cardinality(levels) AND levels[i] <= after LOOP
        i := i + 1;
      END LOOP;
      next_floored := coalesce(levels[i], 32767);
      SELECT c.priority INTO level
        FROM pgbus.job c
       WHERE c.queue = q
         AND c.state IN ('available', 'scheduled', 'retryable')
         AND c.priority > after
         AND c.priority < next_floored
       ORDER BY c.priority
       LIMIT 1;
      IF FOUND OR next_floored = 32767 THEN
        RETURN;
      END IF;
      after := next_floored;
      PERFORM 1
         FROM pgbus.job c
        WHERE c.queue = q
          AND c.state IN ('available', 'scheduled', 'retryable')
          AND c.priority = next_floored
          AND c.run_at >= floors[i]
        ORDER BY c.priority, c.run_at, c.id
        LIMIT 1;
      IF FOUND THEN
        level := next_floored;
        level_floor := floors[i];
        RETURN;
      END IF;
    END LOOP;
  END $$;

--
-- Name: dependency_linked(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.dependency_linked() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_state  text;
    v_result jsonb;
    v_linked boolean;
  BEGIN
    SELECT j.state::text, j.result, j.linked INTO v_state, v_result, v_linked
      FROM pgbus.job j
     WHERE j.id = NEW.depends_on
       FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      -- Moved to pgbus.job_history since the enqueue read it (V33): final, so no lock is needed.
      SELECT h.state::text, h.result INTO v_state, v_result
        FROM pgbus.job_history h
       WHERE h.id = NEW.depends_on;
      IF NOT FOUND THEN
        v_state := 'completed';
        v_result := NULL;
      END IF;
    ELSIF NOT v_linked THEN
      UPDATE pgbus.job j SET linked = true WHERE j.id = NEW.depends_on;
    END IF;
    IF v_state NOT IN ('completed', 'dead', 'cancelled') THEN
      RETURN NULL;  -- its finisher sees linked and this edge
    END IF;
    -- Its finisher did not see this edge: decide it now, as the finisher would have. Reported
    -- again without its batch (the finisher counted it there): only undecided edges change, so
    -- the dependents the finisher saw are left as they are.
    PERFORM pgbus.job_finished_as(ARRAY[NEW.depends_on], ARRAY[NULL::bigint], ARRAY[v_state],
                                  ARRAY[v_result]);
    RETURN NULL;
  END $$;

--
-- Name: due_hint(timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.due_hint(due timestamp with time zone) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT (pg_catalog.ceil(extract(epoch FROM due)::numeric * 1000.0))::bigint::text $$;

--
-- Name: edge_decision(text, jsonpath, text, jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.edge_decision(kind text, predicate jsonpath, parent_state text, result jsonb) RETURNS text
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT CASE
             WHEN parent_state = 'completed' THEN
               CASE kind
                 WHEN 'success' THEN 'completed'
                 WHEN 'failure' THEN 'not_taken'
                 ELSE CASE WHEN coalesce(jsonb_path_match(result, predicate, '{}', true), false)
                           THEN 'completed' ELSE 'not_taken' END
               END
             WHEN kind = 'failure' THEN 'completed'
             ELSE 'failed'
           END
  $$;

--
-- Name: enqueue(text, jsonb, timestamp with time zone, integer, integer, text, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE sql
    AS $$
    SELECT (pgbus.enqueue_job(enqueue.queue, enqueue.payload, enqueue.run_at, enqueue.priority,
                              enqueue.max_attempts, enqueue.unique_key,
                              enqueue.trace_parent, enqueue.trace_state,
                              enqueue.concurrency_key)).id
  $$;

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
    v_ids     bigint[];
    v_states  text[];
    v_results jsonb[];
    v_waiting integer;
    v_failed integer;
  BEGIN
    PERFORM pgbus.check_dependencies(enqueue_after.queue, enqueue_after.depends_on, v_policy);
    v_deps := ARRAY(SELECT DISTINCT d FROM unnest(enqueue_after.depends_on) d ORDER BY d);
    v_missing := ARRAY(SELECT d FROM unnest(v_deps) d
                        WHERE NOT EXISTS (SELECT 1 FROM pgbus.job_all j WHERE j.id = d));
    IF cardinality(v_missing) > 0 THEN
      RAISE EXCEPTION 'pgbus: unknown job id(s) % in the dependencies of a job for queue %: depend only on jobs that exist (a job deleted on completion or pruned is gone)',
        v_missing, enqueue_after.queue
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    -- The dependencies' states, read once (no lock, see above): the delay and the edges below
    -- both come from this one read, so they agree, whatever finishes meanwhile. A finished
    -- dependency may have moved to pgbus.job_history (V33): job_all reads both, each job once.
    SELECT array_agg(j.id ORDER BY j.id), array_agg(j.state::text ORDER BY j.id),
           array_agg(j.result ORDER BY j.id)
      INTO v_ids, v_states, v_results
      FROM pgbus.job_all j
     WHERE j.id = ANY (v_deps);
    SELECT count(*) FILTER (WHERE t.state NOT IN ('completed', 'dead', 'cancelled')),
           count(*) FILTER (WHERE t.state IN ('dead', 'cancelled'))
      INTO v_waiting, v_failed
      FROM unnest(v_states) AS t(state);
    SELECT e.id, e.duplicate INTO enqueue_after.id, enqueue_after.duplicate
      FROM pgbus.enqueue_job(enqueue_after.queue, enqueue_after.payload,
                             CASE WHEN v_waiting + v_failed > 0 THEN now() + interval '36500 days' END,
                             enqueue_after.priority, enqueue_after.max_attempts,
                             enqueue_after.unique_key, enqueue_after.trace_parent,
                             enqueue_after.trace_state) e;
    IF enqueue_after.duplicate THEN
      RETURN;
    END IF;
    -- Due when its dependencies are done: the queue's max-wait (V56) counts from now, not from the
    -- far run_at enqueue_job gave it while they wait.
    UPDATE pgbus.job j
       SET linked = true,
           start_by = now() + (SELECT CASE WHEN j.queue::text = ANY (s.max_wait_queues)
                                           THEN (SELECT w.max_wait FROM pgbus.queue_max_wait w
                                                  WHERE w.queue::text = j.queue::text) END
                                 FROM pgbus.setting s)  -- probed when listed (V57)
     WHERE j.id = enqueue_after.id;
    -- A dependency given twice keeps its first policy. In id order: the deferred triggers lock
    -- the dependencies at commit in the order of these rows.
    INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state, result)
    SELECT DISTINCT ON (j.id) j.id, enqueue_after.id, p.on_failure,
           CASE WHEN j.state = 'completed' THEN 'completed'
                WHEN j.state IN ('dead', 'cancelled') THEN 'failed'
                ELSE 'waiting' END,
           CASE WHEN j.state = 'completed' THEN j.result END
      FROM unnest(enqueue_after.depends_on, v_policy) WITH ORDINALITY AS p(id, on_failure, ord)
      JOIN unnest(v_ids, v_states, v_results) AS j(id, state, result) ON j.id = p.id
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
    v_limit integer;
    v_sealed text[];  -- the queues that encrypt (V53)
    v_waits text[];   -- the queues that have a max-wait (V57)
  BEGIN
    SELECT s.max_payload_bytes, s.encrypted_queues, s.max_wait_queues
      INTO v_limit, v_sealed, v_waits
      FROM pgbus.setting s;
    v_limit := coalesce(v_limit, 1048576);
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
    -- An encrypting queue (V53) takes only sealed payloads, the callback's included.
    IF v_sealed IS NOT NULL THEN
      IF v_cbq::text = ANY (v_sealed) THEN
        PERFORM pgbus.check_sealed(v_cbq, enqueue_batch.callback_payload);
      END IF;
      PERFORM pgbus.check_sealed(t.q, t.p, t.ord::integer)
         FROM unnest(queues, payloads) WITH ORDINALITY AS t(q, p, ord)
        WHERE t.q = ANY (v_sealed);
    END IF;
    -- As in pgbus.enqueue_many: only a payload that could be over the limit is measured.
    PERFORM pgbus.check_payload(t.q, t.p)
       FROM unnest(queues, payloads) AS t(q, p)
      WHERE pg_column_size(t.p) > v_limit / 6 OR pg_column_compression(t.p) IS NOT NULL;
    IF trace_parents IS NOT NULL OR trace_states IS NOT NULL THEN
      PERFORM pgbus.check_trace(pgbus.queue(queues[i]), trace_parents[i], trace_states[i])
         FROM generate_series(1, v_n) AS g(i);
    END IF;
    -- The members as pgbus.enqueue_many inserts them, with their batch, in one INSERT; the wakes,
    -- one per queue, go out at commit (job_wake, V27). Identity values follow the ORDER BY, so ids
    -- are in input order.
    WITH inserted AS (
      INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, trace_parent,
                             trace_state, batch_id, linked, start_by)
      SELECT pgbus.queue(t.q), 'available', t.pr, t.p, t.m, trace_parents[t.ord],
             trace_states[t.ord], enqueue_batch.batch_id, true,
             -- The queue's max-wait (V56), from now: a member is due at once. Probed only for
             -- a queue listed in pgbus.setting (V57).
             now() + CASE WHEN t.q = ANY (v_waits)
                          THEN (SELECT w.max_wait FROM pgbus.queue_max_wait w
                                 WHERE w.queue::text = t.q) END
        FROM unnest(queues, payloads, priorities, max_attempts)
             WITH ORDINALITY AS t(q, p, pr, m, ord)
       ORDER BY t.ord
      RETURNING id, queue)
    SELECT array_agg(i.id ORDER BY i.id) INTO job_ids FROM inserted i;
  END $$;

--
-- Name: enqueue_job(text, jsonb, timestamp with time zone, integer, integer, text, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_job(queue text, payload jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text, OUT id bigint, OUT duplicate boolean) RETURNS record
    LANGUAGE plpgsql
    AS $_$
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
  END $_$;

--
-- Name: enqueue_many(text[], jsonb[], timestamp with time zone[], integer[], integer[], text[], text[], text[], text[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_many(queues text[], payloads jsonb[], run_ats timestamp with time zone[], priorities integer[], max_attempts integer[], unique_keys text[] DEFAULT NULL::text[], trace_parents text[] DEFAULT NULL::text[], trace_states text[] DEFAULT NULL::text[], concurrency_keys text[] DEFAULT NULL::text[]) RETURNS SETOF bigint
    LANGUAGE plpgsql
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

--
-- Name: enqueue_start_by(text, jsonb, timestamp with time zone, timestamp with time zone, integer, integer, text, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_start_by(queue text, payload jsonb, start_by timestamp with time zone, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL::text, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    e record;
  BEGIN
    SELECT * INTO e
      FROM pgbus.enqueue_job(enqueue_start_by.queue, enqueue_start_by.payload,
                             enqueue_start_by.run_at, enqueue_start_by.priority,
                             enqueue_start_by.max_attempts, enqueue_start_by.unique_key,
                             enqueue_start_by.trace_parent, enqueue_start_by.trace_state,
                             enqueue_start_by.concurrency_key);
    IF NOT e.duplicate THEN
      PERFORM pgbus.set_start_by(e.id, enqueue_start_by.start_by);
    END IF;
    RETURN e.id;
  END $$;

--
-- Name: enqueue_unique(text, jsonb, text, interval, text[], text[], interval, interval, timestamp with time zone, integer, integer, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_unique(queue text, payload jsonb, unique_key text, period interval DEFAULT NULL::interval, states text[] DEFAULT NULL::text[], replace text[] DEFAULT NULL::text[], debounce interval DEFAULT NULL::interval, max_wait interval DEFAULT NULL::interval, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT 0, max_attempts integer DEFAULT 25, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, concurrency_key text DEFAULT NULL::text, OUT id bigint, OUT outcome text, OUT due timestamp with time zone) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  #variable_conflict use_variable
  DECLARE
    v_states  pgbus.job_state[];
    v_held_in pgbus.job_state[];
    v_claimed boolean;
    v_hold    bigint;
    v_state   pgbus.job_state;
    v_run_at  timestamptz;
    v_new_run timestamptz;
    v_changes boolean := replace IS NOT NULL OR debounce IS NOT NULL;
    c record;
    e record;
    j record;
  BEGIN
    PERFORM pgbus.check_unique_rule(queue, unique_key, period, states, replace, debounce,
                                    max_wait, run_at);
    IF period IS NOT NULL THEN
      -- Waiting and running states are the index's; the claim keeps the finished ones.
      v_states := ARRAY(SELECT DISTINCT s::pgbus.job_state
                          FROM unnest(coalesce(states, '{completed}')) s
                         WHERE s IN ('completed', 'dead', 'cancelled'));
    END IF;
    v_run_at := CASE WHEN debounce IS NOT NULL THEN now() + debounce ELSE run_at END;
    LOOP
      v_claimed := false;
      v_hold := NULL;
      IF period IS NOT NULL THEN
        INSERT INTO pgbus.unique_claim AS u (queue, unique_key, until, states)
        VALUES (queue, unique_key, now() + period, v_states)
        ON CONFLICT ON CONSTRAINT unique_claim_pkey DO NOTHING;
        IF FOUND THEN
          v_claimed := true;
          v_held_in := v_states;
        ELSE
          SELECT u.job_id, u.until, u.states INTO c
            FROM pgbus.unique_claim u
           WHERE u.queue = enqueue_unique.queue AND u.unique_key = enqueue_unique.unique_key
             FOR UPDATE;
          CONTINUE WHEN NOT FOUND; -- expired and deleted in between: insert it again
          v_held_in := c.states;
          IF c.until > now() AND c.job_id IS NOT NULL THEN
            SELECT a.state INTO v_state FROM pgbus.job_all a WHERE a.id = c.job_id;
            v_state := coalesce(v_state, 'completed');
            IF v_state = ANY ('{scheduled,available,running,retryable}'::pgbus.job_state[])
               OR v_state = ANY (c.states) THEN
              v_hold := c.job_id;
            END IF;
          END IF;
          IF v_hold IS NULL THEN
            -- Expired, or its job finished in a state that frees the key: taken over.
            UPDATE pgbus.unique_claim u
               SET until = now() + period, states = v_states, job_id = NULL
             WHERE u.queue = enqueue_unique.queue AND u.unique_key = enqueue_unique.unique_key;
            v_claimed := true;
            v_held_in := v_states;
          END IF;
        END IF;
      END IF;
      IF v_hold IS NULL THEN
        SELECT * INTO e
          FROM pgbus.enqueue_job(queue, payload, v_run_at, priority, max_attempts, unique_key,
                                 trace_parent, trace_state, concurrency_key);
        IF v_claimed THEN
          UPDATE pgbus.unique_claim u SET job_id = e.id
           WHERE u.queue = enqueue_unique.queue AND u.unique_key = enqueue_unique.unique_key;
        END IF;
        IF NOT e.duplicate THEN
          id := e.id;
          outcome := 'inserted';
          due := coalesce(v_run_at, now());
          RETURN;
        END IF;
        v_hold := e.id;
      END IF;
      -- The holder, locked: a worker's claim skips it until this transaction ends.
      SELECT x.id, x.queue, x.state, x.run_at, x.created_at, x.linked, x.start_by INTO j
        FROM pgbus.job x WHERE x.id = v_hold FOR UPDATE;
      IF NOT FOUND OR j.state = ANY ('{completed,dead,cancelled}'::pgbus.job_state[]) THEN
        -- Finished since it was read.
        IF period IS NOT NULL THEN
          SELECT a.state INTO v_state FROM pgbus.job_all a WHERE a.id = v_hold;
          IF coalesce(v_state, 'completed') = ANY (v_held_in) THEN
            id := v_hold;
            outcome := CASE WHEN v_changes THEN 'not_replaced' ELSE 'duplicate' END;
            RETURN;
          END IF;
        END IF;
        CONTINUE; -- the key is free now: enqueue again
      END IF;
      id := j.id;
      due := j.run_at;
      IF NOT v_changes THEN
        outcome := 'duplicate';
        RETURN;
      END IF;
      IF j.state = 'running' THEN
        outcome := 'not_replaced';
        RETURN;
      END IF;
      -- A linked job (waiting on dependencies, or a batch member) is due when they are done: its
      -- run_at is theirs, so it stays (V16, R__links.sql).
      v_new_run := CASE
        WHEN j.linked THEN j.run_at
        WHEN debounce IS NOT NULL THEN
          greatest(j.run_at, least(now() + debounce, j.created_at + max_wait))
        WHEN 'run_at' = ANY (replace) THEN coalesce(run_at, now())
        ELSE j.run_at END;
      -- The holder's start-by deadline (V43) bounds where an enqueue moves its run_at: the claim
      -- refuses it from the deadline on, so a run_at there would only make it expire. A debounce's
      -- push stops short: the job keeps its run_at (it runs after this enqueue all the same) and
      -- the fields in replace are still replaced ('not_replaced' when there are none). A run_at the
      -- caller asked for there is not given: the holder is left as it is ('not_replaced').
      IF j.start_by IS NOT NULL AND v_new_run >= j.start_by AND v_new_run > j.run_at THEN
        IF debounce IS NULL OR replace IS NULL THEN
          outcome := 'not_replaced';
          RETURN;
        END IF;
        v_new_run := j.run_at;
      END IF;
      IF 'payload' = ANY (coalesce(replace, '{}')) THEN
        PERFORM pgbus.check_payload(queue, payload);
        IF EXISTS (SELECT 1 FROM pgbus.setting s WHERE j.queue::text = ANY (s.encrypted_queues)) THEN
          PERFORM pgbus.check_sealed(j.queue, payload);
        END IF;
      END IF;
      IF NOT isfinite(v_new_run) OR v_new_run > now() + interval '36500 days' THEN
        PERFORM pgbus.check_run_at(j.queue, v_new_run);
      END IF;
      UPDATE pgbus.job x
         SET payload = CASE WHEN 'payload' = ANY (coalesce(replace, '{}'))
                            THEN enqueue_unique.payload ELSE x.payload END,
             priority = CASE WHEN 'priority' = ANY (coalesce(replace, '{}'))
                             THEN enqueue_unique.priority ELSE x.priority END,
             run_at = v_new_run,
             state = CASE WHEN x.state = ANY ('{scheduled,available}'::pgbus.job_state[])
                          THEN CASE WHEN v_new_run <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state
                          ELSE x.state END
       WHERE x.id = j.id;
      IF replace IS NOT NULL THEN
        INSERT INTO pgbus.audit (actor, action, queue, job_id, detail)
        VALUES (pgbus.actor(), 'replace', j.queue, j.id,
                jsonb_build_object('fields', to_jsonb(replace), 'unique_key', unique_key));
      END IF;
      -- Due sooner than it was: a sleeping worker's alarm is set too late, so wake it (unless the
      -- Java API wakes after its commit itself). Later: the alarm rings early and finds nothing.
      IF v_new_run < j.run_at AND current_setting('pgbus.wake', true) IS DISTINCT FROM 'client' THEN
        PERFORM pgbus.notify(j.queue, v_new_run);
      END IF;
      outcome := 'replaced';
      due := v_new_run;
      RETURN;
    END LOOP;
  END $$;

--
-- Name: enqueue_workflow(text, jsonb, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.enqueue_workflow(name text, nodes jsonb, trace_parent text DEFAULT NULL::text, trace_state text DEFAULT NULL::text, OUT workflow_id bigint, OUT job_ids bigint[]) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_order text[] := pgbus.check_workflow(enqueue_workflow.name, enqueue_workflow.nodes);
    v_ids jsonb := '{}';
    n record;
    v_id bigint;
  BEGIN
    INSERT INTO pgbus.workflow (name, created_by)
    VALUES (enqueue_workflow.name, pgbus.actor())
    RETURNING id INTO workflow_id;
    FOR n IN SELECT x AS node, x ->> 'node' AS name,
                    jsonb_array_length(coalesce(x -> 'after', '[]')) AS parents
               FROM jsonb_array_elements(enqueue_workflow.nodes) x LOOP
      IF jsonb_typeof(n.node -> 'payload') IS DISTINCT FROM 'object'
         AND jsonb_typeof(n.node -> 'payload') IS DISTINCT FROM 'array'
         AND jsonb_typeof(n.node -> 'payload') IS DISTINCT FROM 'string' THEN
        RAISE EXCEPTION 'pgbus: node % of workflow % has payload %: pass an object, or {} for no data', quote_literal(n.name), enqueue_workflow.name, coalesce(n.node -> 'payload', 'null')
          USING ERRCODE = 'null_value_not_allowed';
      END IF;
      SELECT e.id INTO v_id
        FROM pgbus.enqueue_job(n.node ->> 'queue', n.node -> 'payload',
                               CASE WHEN n.parents > 0 THEN now() + interval '36500 days' END,
                               coalesce((n.node ->> 'priority')::integer, 0),
                               coalesce((n.node ->> 'maxAttempts')::integer, 25),
                               NULL, enqueue_workflow.trace_parent, enqueue_workflow.trace_state,
                               n.node ->> 'concurrencyKey') e;
      v_ids := v_ids || jsonb_build_object(n.name, v_id);
    END LOOP;
    job_ids := ARRAY(SELECT (v_ids ->> (x ->> 'node'))::bigint
                       FROM jsonb_array_elements(enqueue_workflow.nodes) WITH ORDINALITY AS t(x, ord)
                      ORDER BY t.ord);
    UPDATE pgbus.job j SET linked = true WHERE j.id = ANY (job_ids);
    INSERT INTO pgbus.workflow_job (job_id, workflow_id, node, queue)
    SELECT (v_ids ->> (x ->> 'node'))::bigint, enqueue_workflow.workflow_id, x ->> 'node',
           x ->> 'queue'
      FROM jsonb_array_elements(enqueue_workflow.nodes) x;
    -- In parent id order, as enqueue_after's: the deferred triggers (pgbus.dependency_linked) lock
    -- the parents at commit in the order of these rows. The parents are this transaction's own
    -- jobs, so none has finished: each trigger finds its parent waiting and leaves the edge.
    INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state, kind, predicate)
    SELECT (v_ids ->> (a ->> 'node'))::bigint, (v_ids ->> (x ->> 'node'))::bigint,
           coalesce(a ->> 'onFailure', 'cancel'), 'waiting', coalesce(a ->> 'kind', 'success'),
           (a ->> 'predicate')::jsonpath
      FROM jsonb_array_elements(enqueue_workflow.nodes) x,
           jsonb_array_elements(coalesce(x -> 'after', '[]')) a
     ORDER BY 1, 2;
  END $$;

--
-- Name: explain(bigint); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.explain(job_id bigint) RETURNS jsonb
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    AS $$
  DECLARE
    j pgbus.job;
    rs jsonb[] := '{}';
    blocked boolean := false;   -- a reason other than runnable_now holds the waiting job
    v_due boolean;
    v_err text;
    v_err_at text;
    v_deps jsonb;
    v_dep_waiting integer;
    v_dep_held integer;
    v_dep_cancel integer;
    v_pause record;             -- the pause
    v_readers jsonb;
    v_live integer;
    v_free integer;
    lim record;                 -- the queue's limit row
    v_wstart timestamptz;
    v_left integer;
    v_exec integer;
    v_running jsonb;
    v_blocker record;
    v_node record;              -- the running job's node
    v_ttl interval;
    v_leader text;
    v_leader_ttl integer;
    v_eta timestamptz;
    v_audit record;             -- an audit row
    v_batch record;             -- the batch
    v_tx record;                -- the oldest open transaction
    v_ahead bigint;
    v_pass double precision;  -- fair share: the job's tenant's pass (pgbus.claim_fair)
  BEGIN
    -- V33: a completed or cancelled job may have moved to pgbus.job_history (same columns).
    SELECT * INTO j FROM pgbus.job_all WHERE id = explain.job_id;
    IF NOT FOUND THEN
      RETURN NULL;
    END IF;
    v_err := j.errors -> 0 ->> 'error';
    v_err_at := j.errors -> 0 ->> 'at';

    IF j.state = 'completed' THEN
      rs := rs || pgbus.explain_reason('completed',
        format('Job %s completed at %s, on attempt %s of %s.', j.id, j.finalized_at, j.attempt, j.max_attempts),
        jsonb_build_object('finalized_at', j.finalized_at, 'attempt', j.attempt,
                           'max_attempts', j.max_attempts, 'worker', j.attempted_by,
                           'result_kept', j.result IS NOT NULL),
        NULL, NULL);

    ELSIF j.state = 'dead' AND v_err LIKE 'payload for queue % bytes, over the limit of % bytes%' THEN
      -- Buried by the claim (R__claim.sql): its payload is over pgbus.setting.max_payload_bytes.
      rs := rs || pgbus.explain_reason('oversized',
        format('Job %s was moved aside at %s: its payload is over the payload limit of %s bytes.',
               j.id, j.finalized_at, (SELECT s.max_payload_bytes FROM pgbus.setting s)),
        jsonb_build_object('finalized_at', j.finalized_at,
                           'payload_bytes', octet_length(j.payload::text),
                           'max_payload_bytes', (SELECT s.max_payload_bytes FROM pgbus.setting s)),
        'Store the large data in a table of your own and enqueue its key; or raise pgbus.max-payload-bytes above the payload''s size and replay the job.',
        NULL, v_err);

    ELSIF j.state = 'dead' THEN
      rs := rs || pgbus.explain_reason('dead',
        format('Job %s died at %s after attempt %s of %s (its last error is in error).', j.id,
               j.finalized_at, j.attempt, j.max_attempts),
        jsonb_build_object('finalized_at', j.finalized_at, 'attempt', j.attempt,
                           'max_attempts', j.max_attempts, 'last_error_at', v_err_at,
                           'worker', j.attempted_by),
        'Fix the cause, then replay the job (JobQueue.replay, POST <admin API>/jobs/{id}/replay, or pgbus replay): it runs again with a fresh attempt budget.',
        NULL, v_err);

    ELSIF j.state = 'cancelled' AND v_err LIKE 'expired: not started by %' THEN
      -- Cancelled by the leader's expiry (JobStore.EXPIRE, V43): never claimed by its start_by.
      rs := rs || pgbus.explain_reason('expired',
        format('Job %s was not started by its start-by deadline %s and was cancelled at %s without running.',
               j.id, j.start_by, j.finalized_at),
        jsonb_build_object('start_by', j.start_by, 'finalized_at', j.finalized_at,
                           'attempt', j.attempt, 'run_at', j.run_at),
        'Enqueue it again with a later deadline (EnqueueOptions.startBy, pgbus.queue.<name>.max-wait), or find out why it waited: a paused queue, a limit, no capsule reading it.',
        NULL, v_err);

    ELSIF j.state = 'cancelled' THEN
      SELECT u.actor, u.at, u.detail INTO v_audit
        FROM pgbus.audit u
       WHERE u.job_id = j.id AND u.action = 'cancel'
       ORDER BY u.id DESC
       LIMIT 1;
      rs := rs || pgbus.explain_reason('cancelled',
        format('Job %s was cancelled at %s by %s.', j.id, coalesce(v_audit.at, j.finalized_at),
               coalesce(v_audit.actor, 'its handler or a dependency that failed (no audit entry)')),
        jsonb_build_object('finalized_at', j.finalized_at, 'by', v_audit.actor, 'audited_at', v_audit.at,
                           'attempt', j.attempt),
        NULL, NULL, v_err);

    ELSIF j.state = 'running' THEN
      SELECT nd.worker_id, nd.host, nd.seen_at, nd.heartbeat_ttl_ms INTO v_node
        FROM pgbus.node nd WHERE nd.worker_id = j.attempted_by;
      v_ttl := make_interval(secs => coalesce(v_node.heartbeat_ttl_ms, 30000) / 1000.0);
      SELECT l.holder, ln.heartbeat_ttl_ms INTO v_leader, v_leader_ttl
        FROM pgbus.leader l LEFT JOIN pgbus.node ln ON ln.worker_id = l.holder
       WHERE l.name = 'maintenance' AND l.expires_at > now();
      IF j.lease_expires_at < now() OR v_node.worker_id IS NULL OR v_node.heartbeat_ttl_ms IS NULL
         OR v_node.seen_at < now() - v_ttl * 2 / 3 THEN
        -- The leader's rescue (JobStore.RESCUE) takes it back: at its lease's end, or once the
        -- node's row is two thirds of its TTL old; the leader checks at least every third of its
        -- own TTL (pgbus.rescue-interval's ceiling).
        v_eta := CASE WHEN v_node.heartbeat_ttl_ms IS NULL THEN greatest(j.lease_expires_at, now())
                      ELSE least(greatest(j.lease_expires_at, now()),
                                 greatest(v_node.seen_at + v_ttl * 2 / 3, j.attempted_at + v_ttl * 2 / 3, now()))
                 END + make_interval(secs => coalesce(v_leader_ttl, v_node.heartbeat_ttl_ms, 30000) / 3000.0);
        rs := rs || pgbus.explain_reason('running_dead_node',
          format('Job %s was claimed at %s by %s, which %s; the rescue makes it %s by about %s.',
                 j.id, j.attempted_at, coalesce(j.attempted_by, '?'),
                 CASE WHEN v_node.worker_id IS NULL THEN 'has no node row left'
                      ELSE format('was last seen at %s', v_node.seen_at) END,
                 CASE WHEN j.attempt >= j.max_attempts THEN 'dead (last attempt)' ELSE 'retryable' END,
                 v_eta),
          jsonb_build_object('worker', j.attempted_by, 'host', v_node.host, 'last_seen', v_node.seen_at,
                             'heartbeat_ttl_ms', v_node.heartbeat_ttl_ms, 'since', j.attempted_at,
                             'lease_expires_at', j.lease_expires_at, 'attempt', j.attempt,
                             'max_attempts', j.max_attempts, 'leader', v_leader),
          CASE WHEN v_leader IS NULL
               THEN 'No maintenance leader is live: start any pgbus engine (pgbus.maintenance=true) and its rescue returns the job.'
               ELSE 'None needed: the maintenance leader rescues it.' END,
          CASE WHEN v_leader IS NULL THEN NULL ELSE v_eta END);
      ELSE
        rs := rs || pgbus.explain_reason('running',
          format('Job %s runs on %s since %s (attempt %s of %s); its node was seen at %s.',
                 j.id, j.attempted_by, j.attempted_at, j.attempt, j.max_attempts, v_node.seen_at),
          jsonb_build_object('worker', j.attempted_by, 'host', v_node.host, 'since', j.attempted_at,
                             'attempt', j.attempt, 'max_attempts', j.max_attempts,
                             'progress', j.progress, 'heartbeat', v_node.seen_at,
                             'lease_expires_at', j.lease_expires_at,
                             'cancel_requested', j.cancel_attempt IS NOT DISTINCT FROM j.attempt),
          NULL, NULL);
      END IF;

    ELSE
      -- Waiting: available, scheduled or retryable.
      v_due := j.run_at <= now();

      -- A start-by deadline that passed (V43): the claim refuses the job for good, and the
      -- leader's expiry cancels it within seconds.
      IF j.start_by IS NOT NULL AND j.start_by <= now() THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('expired',
          format('Job %s was not claimed by its start-by deadline %s: it never runs, and the maintenance leader cancels it.',
                 j.id, j.start_by),
          jsonb_build_object('start_by', j.start_by, 'run_at', j.run_at, 'attempt', j.attempt),
          'None: the job ends cancelled (expired). Enqueue it again with a later deadline if it must still run.',
          NULL);
      END IF;

      -- Dependencies (R__links.sql): the edges not completed yet.
      SELECT jsonb_agg(jsonb_build_object('job', d.depends_on,
                                          'state', coalesce(o.state::text, 'gone'),
                                          'edge', d.state, 'on_failure', d.on_failure)
                       ORDER BY d.depends_on),
             count(*) FILTER (WHERE d.state = 'waiting'),
             count(*) FILTER (WHERE d.state = 'failed' AND d.on_failure = 'hold'),
             count(*) FILTER (WHERE d.state = 'failed' AND d.on_failure = 'cancel')
        INTO v_deps, v_dep_waiting, v_dep_held, v_dep_cancel
        FROM pgbus.job_dependency d
        LEFT JOIN pgbus.job_all o ON o.id = d.depends_on
       WHERE d.job_id = j.id AND d.state <> 'completed';
      IF v_deps IS NOT NULL AND j.state = 'scheduled' THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('waiting_on_dependencies',
          format('Job %s waits for %s dependencies: %s still to complete, %s failed and held (on_failure hold).',
                 j.id, jsonb_array_length(v_deps), v_dep_waiting, v_dep_held),
          jsonb_build_object('dependencies', v_deps, 'waiting', v_dep_waiting, 'held', v_dep_held,
                             'rule', 'a failed dependency with on_failure cancel cancels this job; with hold it waits until the dependency is replayed and completes'),
          CASE WHEN v_dep_held > 0
               THEN 'Replay the failed dependencies listed with edge "failed" (they must complete), or cancel this job.'
               ELSE 'Wait for the dependencies to complete; explain them to see why they wait.' END,
          NULL);
      ELSIF NOT v_due THEN
        blocked := true;
        IF j.state = 'retryable' THEN
          rs := rs || pgbus.explain_reason('retry_backoff',
            format('Job %s failed attempt %s of %s and waits out its backoff until %s.',
                   j.id, j.attempt, j.max_attempts, j.run_at),
            jsonb_build_object('next_attempt_at', j.run_at, 'attempt', j.attempt,
                               'max_attempts', j.max_attempts, 'last_error_at', v_err_at),
            'Wait, or run it now: JobAdmin.retryNow, POST <admin API>/jobs/{id}/retry, or pgbus retry.',
            j.run_at, v_err);
        ELSE
          rs := rs || pgbus.explain_reason('due_later',
            format('Job %s is not due until %s.', j.id, j.run_at),
            jsonb_build_object('run_at', j.run_at, 'attempt', j.attempt),
            'Wait, or run it now: JobAdmin.retryNow, POST <admin API>/jobs/{id}/retry, or pgbus retry.',
            j.run_at);
        END IF;
      END IF;

      SELECT qp.paused_at, qp.paused_by,
             (SELECT u.actor FROM pgbus.audit u WHERE u.queue = j.queue AND u.action = 'pause'
               ORDER BY u.id DESC LIMIT 1) AS actor
        INTO v_pause
        FROM pgbus.queue_pause qp WHERE qp.queue = j.queue;
      IF FOUND THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('queue_paused',
          format('Queue %s is paused since %s by %s.', j.queue, v_pause.paused_at, coalesce(v_pause.actor, v_pause.paused_by, 'an unknown user')),
          jsonb_build_object('queue', j.queue, 'paused_at', v_pause.paused_at, 'paused_by', v_pause.paused_by,
                             'actor', v_pause.actor),
          'Resume the queue: JobQueue.resume, POST <admin API>/queues/{queue}/resume, pgbus resume, or SELECT pgbus.resume(queue).',
          NULL);
      END IF;

      SELECT jsonb_agg(jsonb_build_object('worker', r.worker, 'host', r.host, 'capsule', r.capsule,
                                          'queues', r.queues, 'slots', r.slots, 'busy', r.busy,
                                          'in_flight', r.in_flight, 'alive', r.alive,
                                          'seen_at', r.seen_at)),
             count(*) FILTER (WHERE r.alive),
             sum(greatest(r.slots - r.busy, 0)) FILTER (WHERE r.alive)
        INTO v_readers, v_live, v_free
        FROM pgbus.explain_readers(j.queue) r;
      IF v_live = 0 THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('no_live_reader',
          format('No live JVM of the fleet has a capsule that reads queue %s (%s capsules listed, none alive).',
                 j.queue, coalesce(jsonb_array_length(v_readers), 0)),
          jsonb_build_object('queue', j.queue, 'capsules', coalesce(v_readers, '[]'::jsonb),
                             'fleet', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                          'worker', nd.worker_id, 'host', nd.host,
                                          'seen_at', nd.seen_at, 'capsules', nd.capsules)
                                          ORDER BY nd.started_at), '[]'::jsonb)
                                         FROM pgbus.node nd)),
          format('Start or deploy an application with a capsule that reads %s (pgbus.capsule.<name>.queues).', j.queue),
          NULL);
      ELSIF v_free = 0 THEN
        blocked := true;
        rs := rs || pgbus.explain_reason('readers_busy',
          format('Every slot of the %s live capsules that read queue %s is busy.', v_live, j.queue),
          jsonb_build_object('queue', j.queue, 'readers', v_readers),
          'Wait for a slot, or add slots (pgbus.capsule.<name>.concurrency) or instances.',
          NULL);
      END IF;

      SELECT * INTO lim FROM pgbus.queue_limit l WHERE l.queue = j.queue;
      IF FOUND THEN
        IF lim.rate_limit IS NOT NULL THEN
          v_wstart := pgbus.rate_window_start(lim.rate_window);
          v_left := pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count, v_wstart);
          IF v_left <= 0 THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('rate_window_spent',
              format('Queue %s started its %s jobs of the window that began at %s; the next window opens at %s.',
                     j.queue, lim.rate_limit, v_wstart, v_wstart + lim.rate_window),
              jsonb_build_object('rate_limit', lim.rate_limit, 'rate_window', lim.rate_window::text,
                                 'window_start', lim.rate_window_start, 'starts', lim.rate_count,
                                 'next_window_at', v_wstart + lim.rate_window),
              format('Wait for the next window, or raise pgbus.queue.%s.rate-limit.', j.queue),
              v_wstart + lim.rate_window);
          END IF;
        END IF;
        IF lim.global_concurrency IS NOT NULL THEN
          v_exec := pgbus.claim_executions(j.queue);
          IF v_exec >= lim.global_concurrency THEN
            SELECT jsonb_agg(jsonb_build_object('job', x.id, 'worker', x.attempted_by,
                                                'since', x.attempted_at, 'lane', x.lane))
              INTO v_running
              FROM (SELECT x.id, x.attempted_by, x.attempted_at, x.lane FROM pgbus.job x
                     WHERE x.queue = j.queue AND x.state = 'running' ORDER BY x.id LIMIT 20) x;
            blocked := true;
            rs := rs || pgbus.explain_reason('global_limit',
              format('Queue %s runs %s executions, its global limit is %s.', j.queue, v_exec, lim.global_concurrency),
              jsonb_build_object('global_concurrency', lim.global_concurrency, 'executions', v_exec,
                                 'running', v_running),
              format('Wait for a running job to finish, or raise pgbus.queue.%s.global-concurrency.', j.queue),
              NULL);
          END IF;
        END IF;
        -- Keys count only in a queue with a limit row (pgbus.claim_keyed).
        IF j.concurrency_key IS NOT NULL AND lim.key_fifo THEN
          SELECT o.id, o.state::text AS state, o.run_at, o.errors -> 0 ->> 'error' AS error INTO v_blocker
            FROM pgbus.job o
           WHERE o.queue = j.queue AND o.concurrency_key = j.concurrency_key AND o.id <> j.id
             AND (o.state = 'running'
                  OR (o.id < j.id AND o.state IN ('available', 'scheduled', 'retryable', 'dead')
                      AND (o.state <> 'dead' OR NOT lim.key_fifo_skip_dead)))
           ORDER BY o.state = 'running' DESC, o.id
           LIMIT 1;
          IF FOUND THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('fifo_head_blocked',
              format('Key %s of queue %s runs in enqueue order, and job %s (%s) comes first.',
                     j.concurrency_key, j.queue, v_blocker.id, v_blocker.state),
              jsonb_build_object('key', j.concurrency_key, 'blocking_job', v_blocker.id,
                                 'blocking_state', v_blocker.state, 'blocking_run_at', v_blocker.run_at,
                                 'skip_dead', lim.key_fifo_skip_dead),
              CASE v_blocker.state
                WHEN 'dead' THEN format('Replay or cancel job %s, or set pgbus.queue.%s.key-fifo-skip-dead=true.', v_blocker.id, j.queue)
                WHEN 'running' THEN format('Wait for job %s to finish.', v_blocker.id)
                ELSE format('Wait for job %s to run first (explain it), or cancel it.', v_blocker.id) END,
              CASE WHEN v_blocker.state IN ('available', 'scheduled', 'retryable')
                        AND v_blocker.run_at > now() THEN v_blocker.run_at END,
              v_blocker.error);
          END IF;
        ELSIF j.concurrency_key IS NOT NULL THEN
          SELECT count(*)::integer AS n, (array_agg(x.id ORDER BY x.id))[1:20] AS ids INTO v_blocker
            FROM pgbus.job x
           WHERE x.queue = j.queue AND x.concurrency_key = j.concurrency_key AND x.state = 'running';
          IF v_blocker.n >= coalesce(lim.key_concurrency, 1) THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('key_limit',
              format('Key %s of queue %s has %s running jobs, its limit is %s.',
                     j.concurrency_key, j.queue, v_blocker.n, coalesce(lim.key_concurrency, 1)),
              jsonb_build_object('key', j.concurrency_key, 'key_concurrency', coalesce(lim.key_concurrency, 1),
                                 'running', to_jsonb(v_blocker.ids)),
              format('Wait for a job of the key to finish, or raise pgbus.queue.%s.key-concurrency.', j.queue),
              NULL);
          END IF;
        END IF;
        -- Fair share (V50, pgbus.claim_fair): a due job of a fair queue
        -- waits for its tenant's turn while its key has due jobs ahead of it at its level, or has
        -- been served ahead of the queue's clock (the other tenants' jobs come first).
        IF lim.fair_key IS NOT NULL AND j.concurrency_key IS NOT NULL AND v_due THEN
          SELECT count(*) INTO v_ahead
            FROM (SELECT 1 FROM pgbus.job c
                   WHERE c.queue = j.queue AND c.concurrency_key = j.concurrency_key
                     AND c.priority = j.priority
                     AND c.state IN ('available', 'scheduled', 'retryable')
                     AND c.run_at <= now()
                     AND (c.run_at, c.id) < (j.run_at, j.id)
                   LIMIT 10000) c;
          SELECT p.pass INTO v_pass
            FROM pgbus.queue_fair_pass p
           WHERE p.queue = j.queue AND p.tenant = j.concurrency_key;
          IF v_ahead > 0 OR v_pass > lim.fair_clock THEN
            blocked := true;
            rs := rs || pgbus.explain_reason('waiting_for_turn',
              format('Queue %s deals its jobs over its tenants in turn (fair share): key %s has %s due jobs ahead of this one and has been served %s turns ahead of the queue.',
                     j.queue, j.concurrency_key, v_ahead,
                     round(greatest(coalesce(v_pass, lim.fair_clock) - lim.fair_clock, 0)::numeric, 2)),
              jsonb_build_object('key', j.concurrency_key,
                                 'weight', coalesce((lim.fair_weights ->> j.concurrency_key)::integer, 1),
                                 'ahead', v_ahead, 'ahead_capped', v_ahead >= 10000,
                                 'pass', greatest(coalesce(v_pass, lim.fair_clock), lim.fair_clock),
                                 'clock', lim.fair_clock),
              format('Wait for its turn, or raise the key''s weight (pgbus.queue.%s.fair-weights).', j.queue),
              NULL);
          END IF;
        END IF;
      END IF;

      -- Claim floors (R__claim.sql, pgbus.claim_next_level): while a snapshot held open elsewhere
      -- keeps claims slow, capsules claim above per-level floors and may pass over a job with an
      -- older run_at until their next full claim, at most ClaimFloors.FULL_CLAIM_EVERY (10 s) away.
      -- A transaction open for 10 s is the sign (floors engage only while claims are slow).
      IF v_due THEN
        SELECT s.pid, s.xact_start, s.application_name, s.state INTO v_tx
          FROM pg_stat_activity s
         WHERE s.datname = current_database() AND s.pid <> pg_backend_pid()
           AND s.backend_xmin IS NOT NULL AND s.xact_start < now() - interval '10 seconds'
           AND s.xact_start < j.run_at
         ORDER BY s.xact_start
         LIMIT 1;
        IF FOUND THEN
          blocked := true;
          rs := rs || pgbus.explain_reason('claim_floors',
            format('A transaction open since %s (pid %s) holds back vacuum; slowed claims may start above floors and pass this job until their next full claim.',
                   v_tx.xact_start, v_tx.pid),
            jsonb_build_object('pid', v_tx.pid, 'xact_start', v_tx.xact_start,
                               'application_name', v_tx.application_name, 'backend_state', v_tx.state,
                               'full_claim_every_ms', 10000),
            format('End the long transaction (pid %s); otherwise the next full claim takes the job.', v_tx.pid),
            now() + interval '10 seconds');
        END IF;
      END IF;

      IF NOT blocked THEN
        SELECT count(*) INTO v_ahead
          FROM (SELECT 1 FROM pgbus.job c
                 WHERE c.queue = j.queue AND c.state IN ('available', 'scheduled', 'retryable')
                   AND c.run_at <= now()
                   AND (c.priority, c.run_at, c.id) < (j.priority, j.run_at, j.id)
                 LIMIT 10000) c;
        rs := rs || pgbus.explain_reason('runnable_now',
          format('Job %s is due and nothing holds it back: the next claim of a capsule that reads %s takes it (%s due jobs ahead of it).',
                 j.id, j.queue, v_ahead),
          jsonb_build_object('due_since', j.run_at, 'ahead', v_ahead, 'ahead_capped', v_ahead >= 10000,
                             'free_slots', v_free),
          NULL, now());
      END IF;
    END IF;

    IF j.batch_id IS NOT NULL THEN
      SELECT k.id, k.size, k.pending, k.completed, k.dead, k.cancelled, k.callback_queue INTO v_batch
        FROM pgbus.batch k WHERE k.id = j.batch_id;
      IF FOUND AND v_batch.pending > 0 THEN
        rs := rs || pgbus.explain_reason('batch_callback_waiting',
          format('Job %s belongs to batch %s, whose callback (queue %s) waits for %s of its %s members.',
                 j.id, v_batch.id, v_batch.callback_queue, v_batch.pending, v_batch.size),
          jsonb_build_object('batch', v_batch.id, 'size', v_batch.size, 'pending', v_batch.pending,
                             'completed', v_batch.completed, 'dead', v_batch.dead, 'cancelled', v_batch.cancelled,
                             'callback_queue', v_batch.callback_queue),
          NULL, NULL);
      END IF;
    END IF;

    RETURN jsonb_build_object('job', j.id, 'queue', j.queue, 'state', j.state::text,
                              'reasons', to_jsonb(rs));
  END $$;

--
-- Name: explain_readers(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.explain_readers(q text) RETURNS TABLE(worker text, host text, capsule text, queues text[], slots integer, alive boolean, seen_at timestamp with time zone, busy integer, in_flight bigint[])
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT n.worker_id, n.host, c.name, c.queues, c.concurrency,
           coalesce(n.seen_at > now() - make_interval(secs => n.heartbeat_ttl_ms / 1000.0), false),
           n.seen_at, coalesce(r.busy, 0), coalesce(r.ids, '{}')
      FROM pgbus.node n
     CROSS JOIN LATERAL jsonb_to_recordset(
             CASE WHEN pgbus.node_capsules_valid(n.capsules) THEN n.capsules ELSE '[]'::jsonb END)
             AS c(name text, queues text[], concurrency integer)
      LEFT JOIN LATERAL (
             SELECT (count(DISTINCT x.lane) + count(*) FILTER (WHERE x.lane IS NULL))::integer AS busy,
                    (array_agg(x.id ORDER BY x.id))[1:20] AS ids
               FROM pgbus.job x
              WHERE x.queue = ANY (c.queues) AND x.state = 'running'
                AND x.attempted_by = n.worker_id) r ON true
     WHERE q = ANY (c.queues)
     ORDER BY n.started_at, n.worker_id, c.name
  $$;

--
-- Name: explain_reason(text, text, jsonb, text, timestamp with time zone, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.explain_reason(code text, sentence text, evidence jsonb, action text, resolves_at timestamp with time zone, error text DEFAULT NULL::text) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT jsonb_build_object('code', code, 'sentence', sentence,
                              'evidence', coalesce(evidence, '{}'::jsonb),
                              'action', action, 'resolves_at', resolves_at, 'error', error)
  $$;

--
-- Name: job_count_estimate(text, pgbus.job_state); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_count_estimate(q text, s pgbus.job_state) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE pg_catalog.format(
    'EXPLAIN (FORMAT JSON) SELECT 1 FROM pgbus.job j'
    ' WHERE j.queue OPERATOR(pg_catalog.=) %L::text AND j.state OPERATOR(pg_catalog.=) %L',
    q, s) INTO plan;
  RETURN ((plan OPERATOR(pg_catalog.->) 0 OPERATOR(pg_catalog.->) 'Plan')
          OPERATOR(pg_catalog.->>) 'Plan Rows')::numeric::bigint;
END
$$;

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
    v_skip    bigint[];
    v_release bigint[];
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
          -- A callback stored before its queue began to encrypt (V53) may be plain: it is
          -- enqueued as stored, for the handler to refuse and `pgbus reencrypt` to seal, rather
          -- than failing the completion of the batch's last member.
          PERFORM set_config('pgbus.stored_payload', 'on', true);
          SELECT e.id INTO v_cb
            FROM pgbus.enqueue_job(x.callback_queue::text, x.callback_payload, NULL,
                                   x.callback_priority::int, x.callback_attempts) e;
          PERFORM set_config('pgbus.stored_payload', '', true);
          UPDATE pgbus.batch k SET callback_job_id = v_cb, finished_at = now() WHERE k.id = x.id;
        END IF;
      END LOOP;

      -- The finished jobs' undecided edges, decided by their kind (pgbus.edge_decision,
      -- R__workflow.sql; a plain dependency is a success edge): completed (taken; it keeps the
      -- parent's result), not_taken, or failed. A failed edge is decided again when its parent,
      -- replayed, completes; a decided edge otherwise stays as it is.
      WITH decided AS (
        UPDATE pgbus.job_dependency d
           SET state = pgbus.edge_decision(d.kind, d.predicate, t.state, t.result),
               result = CASE WHEN t.state = 'completed' THEN t.result ELSE d.result END
          FROM unnest(w_ids, w_states, w_results) AS t(id, state, result)
         WHERE d.depends_on = t.id AND t.state IN ('completed', 'dead', 'cancelled')
           AND (d.state = 'waiting' OR (d.state = 'failed' AND t.state = 'completed'))
        RETURNING d.job_id, d.state, d.on_failure)
      SELECT array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'completed'),
             array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'not_taken'),
             array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'failed' AND e.on_failure = 'cancel')
        INTO v_release, v_skip, v_cancel
        FROM decided e;

      -- A waiting dependent with no edge left untaken may run now, with a wake-up. Its row
      -- is locked first, in id order, in a statement of its own: two transactions that complete
      -- two dependencies of one job at once then check its edges one after the other, the second
      -- with a snapshot taken after the first committed, so one of them releases it (checked in
      -- the same statement as the lock, both could see the other's edge still waiting).
      IF v_release IS NOT NULL THEN
        PERFORM 1
           FROM pgbus.job j
          WHERE j.id = ANY (v_release)
          ORDER BY j.id
            FOR UPDATE;
        WITH released AS (
          UPDATE pgbus.job j
             SET state = 'available', run_at = now()
           WHERE j.id = ANY (v_release)
             AND j.state = 'scheduled'
             AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency o
                              WHERE o.job_id = j.id AND o.state <> 'completed')
          RETURNING j.queue)
        SELECT count(*) INTO v_woken
          FROM (SELECT pgbus.notify(r.queue, now()) FROM released r GROUP BY r.queue) n;
      END IF;

      -- A dependent that completed or was cancelled needs its incoming edges no more; a dead one
      -- keeps them, so that a replay still reads its dependencies' results. A workflow's member
      -- keeps them all: they are its graph (the admin read, a workflow retry); the leader deletes
      -- them with its jobs (LinkStore).
      DELETE FROM pgbus.job_dependency d
       USING unnest(w_ids, w_states) AS t(id, state)
       WHERE d.job_id = t.id AND t.state IN ('completed', 'cancelled')
         AND NOT EXISTS (SELECT 1 FROM pgbus.workflow_job m WHERE m.job_id = d.job_id);

      -- The next round: the dependents just cancelled, reported in turn. A dependent with an
      -- edge not taken can never have all its edges taken: it ends cancelled at once, and its
      -- error says which branch was not taken (one that a failed edge cancels too says nothing).
      w_ids := NULL;
      IF v_cancel IS NOT NULL OR v_skip IS NOT NULL THEN
        WITH cancelled AS (
          UPDATE pgbus.job j
             SET state = 'cancelled', finalized_at = now(),
                 errors = CASE WHEN j.id = ANY (v_skip) AND NOT j.id = ANY (coalesce(v_cancel, '{}'))
                               THEN jsonb_build_array(jsonb_build_object(
                                      'attempt', j.attempt, 'at', now(),
                                      'error', 'branch not taken: ' || (
                                        SELECT string_agg('job ' || o.depends_on || ' (' || o.kind
                                                          || coalesce(' ' || o.predicate::text, '')
                                                          || ')', ', ' ORDER BY o.depends_on)
                                          FROM pgbus.job_dependency o
                                         WHERE o.job_id = j.id AND o.state = 'not_taken')))
                                    || j.errors
                               ELSE j.errors END
           WHERE j.id = ANY (coalesce(v_cancel, '{}') || coalesce(v_skip, '{}'))
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
-- Name: job_history_count_delta(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_history_count_delta() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    -- Every partition is empty now; they stay counted (at zero).
    DELETE FROM pgbus.job_history_count;
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, d.jobs
      FROM (SELECT (n.finalized_at AT TIME ZONE 'UTC')::date AS day, n.queue::text AS queue,
                   n.state, count(*) AS jobs
              FROM job_history_new n GROUP BY 1, 2, 3) d
     WHERE pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, -d.jobs
      FROM (SELECT (o.finalized_at AT TIME ZONE 'UTC')::date AS day, o.queue::text AS queue,
                   o.state, count(*) AS jobs
              FROM job_history_old o GROUP BY 1, 2, 3) d
     WHERE pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  ELSE
    -- An UPDATE (the reencryption's) rarely changes what is counted: only the keys whose count
    -- moved are written.
    INSERT INTO pgbus.job_history_count AS c (part, queue, state, jobs)
    SELECT pgbus.job_history_part(d.day), d.queue, d.state, d.jobs
      FROM (SELECT coalesce(a.day, r.day) AS day, coalesce(a.queue, r.queue) AS queue,
                   coalesce(a.state, r.state) AS state,
                   coalesce(a.jobs, 0) - coalesce(r.jobs, 0) AS jobs
              FROM (SELECT (n.finalized_at AT TIME ZONE 'UTC')::date AS day, n.queue::text AS queue,
                           n.state, count(*) AS jobs
                      FROM job_history_new n GROUP BY 1, 2, 3) a
              FULL JOIN (SELECT (o.finalized_at AT TIME ZONE 'UTC')::date AS day,
                                o.queue::text AS queue, o.state, count(*) AS jobs
                           FROM job_history_old o GROUP BY 1, 2, 3) r
                ON r.day = a.day AND r.queue = a.queue AND r.state = a.state) d
     WHERE d.jobs <> 0 AND pgbus.job_history_part(d.day) IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (part, queue, state) DO UPDATE SET jobs = c.jobs + excluded.jobs;
  END IF;
  RETURN NULL;
END;
$$;

--
-- Name: job_history_count_prune(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_history_count_prune() RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
DECLARE
  v_gone integer;
BEGIN
  DELETE FROM pgbus.job_history_count c
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                      WHERE i.inhrelid = c.part
                        AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass);
  GET DIAGNOSTICS v_gone = ROW_COUNT;
  DELETE FROM pgbus.job_history_counted c
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                      WHERE i.inhrelid = c.part
                        AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass);
  RETURN v_gone;
END;
$$;

--
-- Name: job_history_part(date); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_history_part(day date) RETURNS oid
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  SELECT pg_catalog.to_regclass('pgbus.job_history_p' || pg_catalog.to_char(day, 'YYYYMMDD'))::oid
$$;

--
-- Name: job_history_recount(regclass); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_history_recount(day_partition regclass) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
DECLARE
  v_jobs bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                  WHERE i.inhrelid = day_partition
                    AND i.inhparent = 'pgbus.job_history'::pg_catalog.regclass) THEN
    RAISE EXCEPTION 'pgbus: % is not a partition of pgbus.job_history: pass one of its partitions',
      (SELECT pg_catalog.format('%I.%I', n.nspname, c.relname)
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.oid = day_partition)
      USING ERRCODE = '22023';
  END IF;
  -- Without the triggers a count would go stale at the next write: never mark it.
  IF (SELECT count(*) FROM pg_catalog.pg_trigger t
       WHERE t.tgrelid = 'pgbus.job_history'::pg_catalog.regclass
         AND t.tgname IN ('job_history_count_insert', 'job_history_count_delete',
                          'job_history_count_update', 'job_history_count_truncate')) <> 4 THEN
    RAISE EXCEPTION 'pgbus: the count triggers of pgbus.job_history are missing: create them again as V47__history_counts.sql does'
      USING ERRCODE = '55000';
  END IF;
  EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE MODE', day_partition);
  DELETE FROM pgbus.job_history_count c WHERE c.part = day_partition::oid;
  EXECUTE pg_catalog.format(
    'INSERT INTO pgbus.job_history_count (part, queue, state, jobs)'
    ' SELECT $1, h.queue::text, h.state, count(*) FROM %s h GROUP BY 2, 3', day_partition)
    USING day_partition::oid;
  SELECT coalesce(sum(c.jobs), 0) INTO v_jobs FROM pgbus.job_history_count c
   WHERE c.part = day_partition::oid;
  INSERT INTO pgbus.job_history_counted (part) VALUES (day_partition::oid)
  ON CONFLICT (part) DO UPDATE SET counted_at = now();
  PERFORM pgbus.job_history_count_prune();
  RETURN v_jobs;
END;
$_$;

--
-- Name: job_progress_valid(jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_progress_valid(progress jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    RETURN jsonb_typeof(progress) = 'object'
       AND octet_length(progress::text) <= 1024
       AND CASE WHEN jsonb_typeof(progress -> 'percent') = 'number'
                THEN (progress ->> 'percent')::numeric BETWEEN 0 AND 100
                ELSE false END
       AND coalesce(jsonb_typeof(progress -> 'message'), 'null') IN ('string', 'null')
       AND coalesce(length(progress ->> 'message'), 0) <= 200;
  END $$;

--
-- Name: job_result_valid(jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_result_valid(result jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    RETURN octet_length(result::text) <= 65536;
  END $$;

--
-- Name: job_wake(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.job_wake() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
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

--
-- Name: join_workflow(bigint, bigint[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.join_workflow(workflow_id bigint, job_ids bigint[]) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    WITH joined AS (
      INSERT INTO pgbus.workflow_job (job_id, workflow_id, node, queue)
      SELECT j.id, join_workflow.workflow_id, NULL, j.queue::text
        FROM pgbus.job j
       WHERE j.id = ANY (join_workflow.job_ids)
      ON CONFLICT (job_id) DO NOTHING
      RETURNING job_id)
    UPDATE pgbus.job j SET linked = true
      FROM joined x WHERE j.id = x.job_id AND NOT j.linked;
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
-- Name: node_capsules_valid(jsonb); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.node_capsules_valid(capsules jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
  BEGIN
    IF jsonb_typeof(node_capsules_valid.capsules) <> 'array' THEN
      RETURN false;
    END IF;
    RETURN NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(node_capsules_valid.capsules) AS e(c)
       WHERE CASE WHEN jsonb_typeof(e.c) <> 'object'
                    OR jsonb_typeof(e.c -> 'name') IS DISTINCT FROM 'string'
                    OR jsonb_typeof(e.c -> 'concurrency') IS DISTINCT FROM 'number'
                    OR (e.c ->> 'concurrency') !~ '^[0-9]{1,9}$'
                    OR jsonb_typeof(e.c -> 'queues') IS DISTINCT FROM 'array' THEN true
                  ELSE EXISTS (SELECT 1 FROM jsonb_array_elements(e.c -> 'queues') AS q(v)
                                WHERE jsonb_typeof(q.v) <> 'string') END);
  END $_$;

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
-- Name: queue_blockers(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_blockers(queue text DEFAULT NULL::text) RETURNS TABLE(queue text, waiting bigint, runnable_now bigint, cause text, jobs bigint)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$ SELECT * FROM pgbus.queue_blockers_of($1) $_$;

--
-- Name: queue_blockers_of(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_blockers_of(wanted text) RETURNS TABLE(queue text, waiting bigint, runnable_now bigint, cause text, jobs bigint)
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    AS $$
  DECLARE
    q text;
    c record;
    lim record;
    v_paused boolean;
    v_cap bigint;        -- jobs the queue's limits let start now; NULL: no limit
    v_rate_cap bigint;
    v_global_cap bigint;
    v_eligible bigint;
  BEGIN
    IF wanted IS NOT NULL THEN
      PERFORM pgbus.queue(wanted);  -- a bad name is refused with the rule it broke
    END IF;
    FOR q IN
      SELECT wanted WHERE wanted IS NOT NULL
      UNION ALL
      SELECT t.queue FROM (
        WITH RECURSIVE w(queue) AS (
          (SELECT j.queue::text FROM pgbus.job j
            WHERE j.state IN ('available', 'scheduled', 'retryable') ORDER BY j.queue LIMIT 1)
          UNION ALL
          SELECT (SELECT j.queue::text FROM pgbus.job j
                   WHERE j.state IN ('available', 'scheduled', 'retryable') AND j.queue::text > w.queue
                   ORDER BY j.queue LIMIT 1)
            FROM w WHERE w.queue IS NOT NULL)
        SELECT w.queue FROM w WHERE w.queue IS NOT NULL
        UNION
        SELECT p.queue::text FROM pgbus.queue_pause p
        UNION
        SELECT l.queue::text FROM pgbus.queue_limit l) t
       WHERE wanted IS NULL
       ORDER BY 1
    LOOP
      SELECT * INTO lim FROM pgbus.queue_limit l WHERE l.queue = q;
      v_paused := EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
      IF lim.queue IS NULL THEN
        -- No limit row: no key counts, and the whole answer is one range of job_claim_idx.
        SELECT count(*) AS waiting,
               count(*) FILTER (WHERE w.deps) AS deps,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state = 'retryable') AS backoff,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state <> 'retryable') AS later,
               0::bigint AS key_limit, 0::bigint AS fifo,
               count(*) FILTER (WHERE w.due) AS eligible
          INTO c
          FROM (SELECT j.state, j.run_at <= now() AS due,
                       j.state = 'scheduled' AND j.linked
                         AND EXISTS (SELECT 1 FROM pgbus.job_dependency d
                                      WHERE d.job_id = j.id AND d.state <> 'completed') AS deps
                  FROM pgbus.job j
                 WHERE j.queue = q AND j.state IN ('available', 'scheduled', 'retryable')) w;
      ELSE
        SELECT count(*) AS waiting,
               count(*) FILTER (WHERE w.deps) AS deps,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state = 'retryable') AS backoff,
               count(*) FILTER (WHERE NOT w.deps AND NOT w.due AND w.state <> 'retryable') AS later,
               count(*) FILTER (WHERE w.due AND w.key_blocked AND NOT lim.key_fifo) AS key_limit,
               count(*) FILTER (WHERE w.due AND w.key_blocked AND lim.key_fifo) AS fifo,
               count(*) FILTER (WHERE w.due AND NOT w.key_blocked) AS eligible
          INTO c
          FROM (SELECT j.state, j.run_at <= now() AS due,
                       j.state = 'scheduled' AND j.linked
                         AND EXISTS (SELECT 1 FROM pgbus.job_dependency d
                                      WHERE d.job_id = j.id AND d.state <> 'completed') AS deps,
                       -- Keys count only in a queue with a limit row (pgbus.claim_keyed). A due
                       -- keyed job is held when a claim would pass it now: without FIFO, when the
                       -- key's running jobs and its due jobs before it in claim order reach the
                       -- limit; with FIFO, when a job of its key runs, an older one waits (due or
                       -- not), or an older one lies dead (unless skipped).
                       coalesce(j.concurrency_key IS NOT NULL AND j.run_at <= now()
                         AND CASE WHEN lim.key_fifo
                                  THEN r.n IS NOT NULL OR j.fifo_rank > 1
                                       OR EXISTS (SELECT 1 FROM pgbus.job o
                                                   WHERE o.queue = q AND o.concurrency_key = j.concurrency_key
                                                     AND o.id < j.id AND o.state = 'dead'
                                                     AND NOT lim.key_fifo_skip_dead)
                                  ELSE coalesce(r.n, 0) + j.key_rank > coalesce(lim.key_concurrency, 1) END,
                         false) AS key_blocked
                  FROM (SELECT j.id, j.state, j.run_at, j.linked, j.concurrency_key,
                               row_number() OVER (
                                 PARTITION BY j.concurrency_key, j.run_at <= now()
                                 ORDER BY j.priority, j.run_at, j.id) AS key_rank,
                               row_number() OVER (PARTITION BY j.concurrency_key ORDER BY j.id) AS fifo_rank
                          FROM pgbus.job j
                         WHERE j.queue = q AND j.state IN ('available', 'scheduled', 'retryable')) j
                  -- The running jobs per key: one range of job_key_running_idx.
                  LEFT JOIN (SELECT x.concurrency_key, count(*) AS n
                               FROM pgbus.job x
                              WHERE x.queue = q AND x.state = 'running' AND x.concurrency_key IS NOT NULL
                              GROUP BY x.concurrency_key) r ON r.concurrency_key = j.concurrency_key) w;
      END IF;

      v_rate_cap := NULL;
      v_global_cap := NULL;
      IF lim.rate_limit IS NOT NULL THEN
        v_rate_cap := greatest(pgbus.rate_left(lim.rate_limit, lim.rate_window_start, lim.rate_count,
                                               pgbus.rate_window_start(lim.rate_window)), 0);
      END IF;
      IF lim.global_concurrency IS NOT NULL THEN
        v_global_cap := greatest(lim.global_concurrency - pgbus.claim_executions(q), 0);
      END IF;
      v_cap := least(v_rate_cap, v_global_cap);  -- least ignores NULLs
      v_eligible := CASE WHEN v_paused THEN 0 ELSE c.eligible END;

      queue_blockers_of.queue := q;
      waiting := c.waiting;
      runnable_now := CASE WHEN v_cap IS NULL THEN v_eligible ELSE least(v_eligible, v_cap) END;
      cause := NULL;
      jobs := NULL;
      RETURN NEXT;
      FOR cause, jobs IN
        SELECT * FROM (VALUES
          ('waiting_on_dependencies', c.deps),
          ('retry_backoff', c.backoff),
          ('due_later', c.later),
          ('queue_paused', CASE WHEN v_paused THEN c.key_limit + c.fifo + c.eligible ELSE 0 END),
          ('key_limit', CASE WHEN v_paused THEN 0 ELSE c.key_limit END),
          ('fifo_head_blocked', CASE WHEN v_paused THEN 0 ELSE c.fifo END),
          ('rate_window_spent', CASE WHEN v_cap IS NOT NULL AND v_cap = v_rate_cap
                                     THEN v_eligible - runnable_now ELSE 0 END),
          ('global_limit', CASE WHEN v_cap IS NOT NULL AND v_cap IS DISTINCT FROM v_rate_cap
                                THEN v_eligible - runnable_now ELSE 0 END)) v(cause, jobs)
         WHERE v.jobs > 0
      LOOP
        RETURN NEXT;
      END LOOP;
    END LOOP;
  END $$;

--
-- Name: queue_encrypt_set(text, boolean, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_encrypt_set(queue text, encrypt boolean, updated_by text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_encrypt_set.queue);
  BEGIN
    IF queue_encrypt_set.encrypt IS NULL THEN
      RAISE EXCEPTION 'pgbus: encrypt for queue % is NULL: pass true (SQL enqueues must be sealed) or false', v_queue::text
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Sorted and without duplicates; NULL when no queue encrypts, which the enqueue tests first.
    UPDATE pgbus.setting s
       SET encrypted_queues = nullif(ARRAY(
             SELECT DISTINCT x.q
               FROM unnest(coalesce(s.encrypted_queues, '{}') || ARRAY[v_queue::text]) AS x(q)
              WHERE x.q <> v_queue::text OR queue_encrypt_set.encrypt
              ORDER BY x.q), '{}')
     WHERE (v_queue::text = ANY (coalesce(s.encrypted_queues, '{}'))) IS DISTINCT FROM queue_encrypt_set.encrypt;
    RETURN FOUND;
  END $$;

--
-- Name: queue_fair_set(text, text, jsonb, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_fair_set(queue text, fair_key text, weights jsonb DEFAULT NULL::jsonb, updated_by text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
  #variable_conflict use_variable
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_fair_set.queue);
    v_bad text;
  BEGIN
    IF fair_key IS DISTINCT FROM 'concurrency_key' AND fair_key IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: fair key % for queue % is invalid: use ''concurrency_key'' (the jobs'' concurrency keys are the tenants), or NULL for none',
        pg_catalog.quote_literal(pg_catalog.left(fair_key, 80)), v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF weights IS NOT NULL AND fair_key IS NULL THEN
      RAISE EXCEPTION 'pgbus: fair weights for queue % need a fair key: pass fair_key => ''concurrency_key''', v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF weights IS NOT NULL AND jsonb_typeof(weights) <> 'object' THEN
      RAISE EXCEPTION 'pgbus: fair weights % for queue % are invalid: use an object of tenant: weight, for example {"tenantA": 3}',
        pg_catalog.left(weights::text, 80), v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(coalesce(weights, '{}'))) > 1000 THEN
      RAISE EXCEPTION 'pgbus: fair weights for queue % name % tenants, over the limit of 1000: weigh the few that need it (a tenant not named weighs 1)',
        v_queue::text, (SELECT count(*) FROM jsonb_object_keys(weights))
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT pg_catalog.format('%s: %s', pg_catalog.left(w.key, 80), pg_catalog.left(w.value::text, 20)) INTO v_bad
      FROM jsonb_each(coalesce(weights, '{}')) w
     WHERE pg_catalog.length(w.key) NOT BETWEEN 1 AND 255 OR pg_catalog.btrim(w.key) = ''
        OR jsonb_typeof(w.value) <> 'number' OR w.value::text !~ '^[0-9]+$'
        OR w.value::text::numeric NOT BETWEEN 1 AND 1000
     LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'pgbus: fair weight % for queue % is invalid: use a concurrency key of 1 to 255 characters and a whole weight from 1 to 1000',
        v_bad, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fair_key IS NULL THEN
      UPDATE pgbus.queue_limit l SET fair_key = NULL, fair_weights = NULL, fair_clock = 0
       WHERE l.queue = v_queue AND l.fair_key IS NOT NULL;
      DELETE FROM pgbus.queue_fair_pass p WHERE p.queue = v_queue;
      RETURN;
    END IF;
    INSERT INTO pgbus.queue_limit AS l (queue, fair_key, fair_weights, updated_by)
    VALUES (v_queue, fair_key, weights, coalesce(updated_by, current_user::text))
    ON CONFLICT ON CONSTRAINT queue_limit_pkey DO UPDATE
      SET fair_key = excluded.fair_key, fair_weights = excluded.fair_weights,
          updated_at = now(), updated_by = excluded.updated_by
      WHERE (l.fair_key, l.fair_weights) IS DISTINCT FROM (excluded.fair_key, excluded.fair_weights);
  END $_$;

--
-- Name: queue_head(text, boolean); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_head(queue text, delayed_only boolean DEFAULT false) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET enable_sort TO 'off'
    SET jit TO 'off'
    AS $$
  #variable_conflict use_column
  DECLARE
    v_level integer;
    v_at    timestamptz;
    v_head  timestamptz;
  BEGIN
    SELECT j.priority INTO v_level FROM pgbus.job j
     WHERE j.queue::text = queue_head.queue
       AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
     ORDER BY j.priority LIMIT 1;
    WHILE v_level IS NOT NULL LOOP
      SELECT j.run_at INTO v_at FROM pgbus.job j
       WHERE j.queue::text = queue_head.queue
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
         AND j.priority = v_level
         AND (NOT queue_head.delayed_only OR j.state OPERATOR(pg_catalog.<>) 'available')
         -- Past its start-by deadline (V43) a job is due no more: the claim refuses it, and no
         -- capsule may wake for it before the leader cancels it.
         AND (j.start_by IS NULL OR j.start_by OPERATOR(pg_catalog.>) pg_catalog.now())
       ORDER BY j.run_at LIMIT 1;
      IF v_at < v_head OR v_head IS NULL THEN
        v_head := v_at;
      END IF;
      -- No row sets v_level to NULL, which ends the loop.
      SELECT j.priority INTO v_level FROM pgbus.job j
       WHERE j.queue::text = queue_head.queue
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
         AND j.priority > v_level
       ORDER BY j.priority LIMIT 1;
    END LOOP;
    RETURN v_head;
  END $$;

--
-- Name: queue_history_rollup(interval, interval); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_history_rollup(grace interval, keep interval) RETURNS integer
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    SET jit TO 'off'
    AS $$
DECLARE
  v_from    timestamptz;
  v_to      timestamptz;
  v_written integer := 0;
  v_pruned  integer := 0;
BEGIN
  -- The bounds of HistoryStore.GRACE and MaintainerConfig.HISTORY_RETENTION.
  IF grace IS NULL OR grace < interval '0' OR grace > interval '10 minutes' THEN
    RAISE EXCEPTION 'pgbus: invalid grace %: use 0 to 10 minutes', grace
      USING ERRCODE = '22023';
  END IF;
  IF keep IS NULL OR keep < interval '1 hour' OR keep > interval '31 days' THEN
    RAISE EXCEPTION 'pgbus: invalid history retention %: use 1 hour to 31 days (pgbus.history.retention)', keep
      USING ERRCODE = '22023';
  END IF;

  SELECT m.rolled_to INTO v_from FROM pgbus.queue_minute_mark m FOR UPDATE;
  IF NOT FOUND THEN
    -- Someone deleted the mark: history starts again now.
    INSERT INTO pgbus.queue_minute_mark (rolled_to)
    VALUES (date_trunc('minute', now() - grace)) ON CONFLICT DO NOTHING;
    RETURN 0;
  END IF;
  v_from := greatest(v_from, date_trunc('minute', now() - keep));
  v_to := date_trunc('minute', now() - grace);

  IF v_to > v_from THEN
    -- Each arm of the failures is its own index range (job_finalized_queue_idx, job_lease_idx,
    -- job_queue_state_idx per queue for the retryable jobs), not one OR over the table. Planner
    -- trap: the finished jobs' arm names completed and dead, and cancelled apart. All three are the partial index's whole predicate,
    -- so the planner would drop the state condition as implied, leaving finalized_at, the
    -- index's second column, to a scan of the whole index (or a seq scan of the table).
    WITH RECURSIVE queues(queue) AS (
      SELECT min(j.queue) FROM pgbus.job j
      UNION ALL
      SELECT (SELECT min(j.queue) FROM pgbus.job j WHERE j.queue > q.queue)
        FROM queues q WHERE q.queue IS NOT NULL
    ), finished AS (
      SELECT j.queue::text AS queue, date_trunc('minute', j.finalized_at) AS minute, j.state,
             greatest(0, extract(epoch FROM j.attempted_at - j.run_at) * 1000)::bigint AS wait_ms,
             greatest(0, extract(epoch FROM j.finalized_at - j.attempted_at) * 1000)::bigint AS run_ms
        FROM pgbus.job j
       WHERE j.state = ANY ('{completed,dead}'::pgbus.job_state[])
         AND j.finalized_at >= v_from AND j.finalized_at < v_to
      UNION ALL
      -- V33: completed jobs move to pgbus.job_history a minute after they end, before a rollup
      -- after a quiet spell reads them (job_history_finalized_brin, V60, per day's partition).
      SELECT h.queue::text, date_trunc('minute', h.finalized_at), h.state,
             greatest(0, extract(epoch FROM h.attempted_at - h.run_at) * 1000)::bigint,
             greatest(0, extract(epoch FROM h.finalized_at - h.attempted_at) * 1000)::bigint
        FROM pgbus.job_history h
       WHERE h.state = 'completed' AND h.finalized_at >= v_from AND h.finalized_at < v_to
    ), per_minute AS (
      SELECT f.queue, f.minute,
             count(*) FILTER (WHERE f.state = 'completed') AS completed,
             count(*) FILTER (WHERE f.state = 'dead') AS dead,
             percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.wait_ms) AS wait,
             percentile_disc(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY f.run_ms) AS run
        FROM finished f
       GROUP BY 1, 2
    ), erring AS (
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = ANY ('{completed,dead}'::pgbus.job_state[])
         AND j.finalized_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = 'cancelled' AND j.finalized_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      SELECT h.queue, h.errors FROM pgbus.job_history h
       WHERE h.finalized_at >= v_from AND h.errors <> '[]'::jsonb
      UNION ALL
      SELECT j.queue, j.errors FROM pgbus.job j
       WHERE j.state = 'running' AND j.attempted_at >= v_from AND j.errors <> '[]'::jsonb
      UNION ALL
      -- Retryable jobs, one range of job_queue_state_idx (queue, state) per queue: the queues are
      -- found by a skip scan of that index (one probe each), and OFFSET 0 keeps the lateral range
      -- from being flattened into a join, which reads the whole index or the table for a state
      -- that is its second column (40 ms at 2M waiting jobs, 230 ms as a parallel seq scan; this
      -- shape 2.6 ms for 8 queues and 2,000 retryable jobs).
      SELECT r.queue, r.errors
        FROM queues q
       CROSS JOIN LATERAL (
             SELECT j.queue, j.errors FROM pgbus.job j
              WHERE j.queue = q.queue AND j.state = 'retryable' AND j.run_at >= v_from
             OFFSET 0) r
    ), failures AS (
      SELECT e.queue::text AS queue, date_trunc('minute', x.at) AS minute, count(*) AS failed
        FROM erring e
       CROSS JOIN LATERAL jsonb_array_elements(e.errors) AS a(entry)
       CROSS JOIN LATERAL (SELECT (a.entry ->> 'at')::timestamptz AS at) x
       WHERE x.at >= v_from AND x.at < v_to
       GROUP BY 1, 2
    )
    INSERT INTO pgbus.queue_minute AS h
      (queue, minute, completed, failed, dead,
       wait_p50_ms, wait_p95_ms, wait_p99_ms, run_p50_ms, run_p95_ms, run_p99_ms)
    SELECT coalesce(p.queue, f.queue), coalesce(p.minute, f.minute),
           coalesce(p.completed, 0), coalesce(f.failed, 0), coalesce(p.dead, 0),
           p.wait[1], p.wait[2], p.wait[3], p.run[1], p.run[2], p.run[3]
      FROM per_minute p
      FULL JOIN failures f ON f.queue = p.queue AND f.minute = p.minute
    ON CONFLICT (queue, minute) DO NOTHING;
    GET DIAGNOSTICS v_written = ROW_COUNT;

    UPDATE pgbus.queue_minute_mark SET rolled_to = v_to;
  END IF;

  DELETE FROM pgbus.queue_minute h WHERE h.minute < now() - keep;
  GET DIAGNOSTICS v_pruned = ROW_COUNT;
  RETURN v_written + v_pruned;
END;
$$;

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
    IF EXISTS (SELECT 1 FROM pgbus.queue_limit l
                WHERE l.queue = v_queue AND l.fair_key IS NOT NULL)
       OR EXISTS (SELECT 1 FROM pgbus.job j
                WHERE j.queue = v_queue AND j.concurrency_key IS NOT NULL
                  AND j.state IN ('available', 'scheduled', 'retryable', 'running')) THEN
      PERFORM pgbus.queue_limit_set(v_queue);
      RETURN false;
    END IF;
    DELETE FROM pgbus.queue_limit l WHERE l.queue = v_queue;
    PERFORM pgbus.notify(v_queue, now());
    RETURN true;
  END $$;

--
-- Name: queue_limit_set(text, integer, integer, text, integer, interval, boolean, boolean); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_limit_set(queue text, global_concurrency integer DEFAULT NULL::integer, key_concurrency integer DEFAULT NULL::integer, updated_by text DEFAULT NULL::text, rate_limit integer DEFAULT NULL::integer, rate_window interval DEFAULT NULL::interval, key_fifo boolean DEFAULT false, key_fifo_skip_dead boolean DEFAULT false) RETURNS void
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
    IF queue_limit_set.rate_limit NOT BETWEEN 1 AND 1000000 THEN
      RAISE EXCEPTION 'pgbus: rate limit % for queue % is invalid: use 1 to 1000000 job starts per window, or NULL for no rate limit',
        queue_limit_set.rate_limit, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.rate_limit IS NOT NULL AND queue_limit_set.rate_window IS NULL THEN
      RAISE EXCEPTION 'pgbus: rate limit % for queue % has no window: pass rate_window too, for example interval ''1 minute''',
        queue_limit_set.rate_limit, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.rate_window IS NOT NULL AND queue_limit_set.rate_limit IS NULL THEN
      RAISE EXCEPTION 'pgbus: rate window % for queue % has no rate limit: pass rate_limit too (job starts per window)',
        queue_limit_set.rate_window, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT (queue_limit_set.rate_window BETWEEN interval '1 millisecond' AND interval '1 day') THEN
      RAISE EXCEPTION 'pgbus: rate window % for queue % is invalid: use 1 millisecond to 1 day',
        queue_limit_set.rate_window, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(queue_limit_set.key_fifo_skip_dead, false)
       AND NOT coalesce(queue_limit_set.key_fifo, false) THEN
      RAISE EXCEPTION 'pgbus: key_fifo_skip_dead for queue % needs key_fifo: without FIFO per key a dead job holds nothing back',
        v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(queue_limit_set.key_fifo, false) AND queue_limit_set.key_concurrency <> 1 THEN
      RAISE EXCEPTION 'pgbus: key concurrency % for queue % contradicts key_fifo, which starts a key''s jobs one at a time',
        queue_limit_set.key_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO pgbus.queue_limit AS l
           (queue, global_concurrency, key_concurrency, rate_limit, rate_window, key_fifo,
            key_fifo_skip_dead, updated_by)
    VALUES (v_queue, queue_limit_set.global_concurrency, queue_limit_set.key_concurrency,
            queue_limit_set.rate_limit, queue_limit_set.rate_window,
            coalesce(queue_limit_set.key_fifo, false),
            coalesce(queue_limit_set.key_fifo_skip_dead, false),
            coalesce(queue_limit_set.updated_by, current_user::text))
    ON CONFLICT (queue) DO UPDATE
      SET global_concurrency = excluded.global_concurrency,
          key_concurrency = excluded.key_concurrency,
          rate_limit = excluded.rate_limit,
          rate_window = excluded.rate_window,
          key_fifo = excluded.key_fifo,
          key_fifo_skip_dead = excluded.key_fifo_skip_dead,
          -- A new window length counts afresh; the same one keeps its window's count.
          rate_window_start = CASE WHEN l.rate_window IS NOT DISTINCT FROM excluded.rate_window
                                   THEN l.rate_window_start END,
          rate_count = CASE WHEN l.rate_window IS NOT DISTINCT FROM excluded.rate_window
                            THEN l.rate_count ELSE 0 END,
          updated_at = now(),
          updated_by = excluded.updated_by
      WHERE (l.global_concurrency, l.key_concurrency, l.rate_limit, l.rate_window, l.key_fifo,
             l.key_fifo_skip_dead)
            IS DISTINCT FROM (excluded.global_concurrency, excluded.key_concurrency,
                              excluded.rate_limit, excluded.rate_window, excluded.key_fifo,
                              excluded.key_fifo_skip_dead);
    -- A raised limit frees capacity now: wake the queue's workers at commit.
    PERFORM pgbus.notify(v_queue, now());
  END $$;

--
-- Name: queue_max_wait_listed(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_max_wait_listed() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    IF (SELECT s.max_wait_queues FROM pgbus.setting s) IS DISTINCT FROM
       nullif(ARRAY(SELECT w.queue::text FROM pgbus.queue_max_wait w ORDER BY 1), '{}') THEN
      PERFORM 1 FROM pgbus.setting s FOR UPDATE;
      UPDATE pgbus.setting s
         SET max_wait_queues = nullif(ARRAY(SELECT w.queue::text FROM pgbus.queue_max_wait w
                                             ORDER BY 1), '{}');
    END IF;
    RETURN NULL;
  END $$;

--
-- Name: queue_max_wait_set(text, interval, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.queue_max_wait_set(queue text, max_wait interval, updated_by text DEFAULT NULL::text) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  #variable_conflict use_column
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_max_wait_set.queue);
  BEGIN
    IF queue_max_wait_set.max_wait IS NULL THEN
      DELETE FROM pgbus.queue_max_wait w WHERE w.queue = v_queue;
      RETURN FOUND;
    END IF;
    IF NOT (queue_max_wait_set.max_wait BETWEEN interval '1 millisecond' AND interval '36500 days') THEN
      RAISE EXCEPTION 'pgbus: max_wait % for queue % is invalid: use 1 millisecond to 36500 days (how long a job may wait to start), or NULL for no deadline',
        queue_max_wait_set.max_wait, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO pgbus.queue_max_wait AS w (queue, max_wait, updated_by)
    VALUES (v_queue, queue_max_wait_set.max_wait,
            coalesce(queue_max_wait_set.updated_by, current_user::text))
    ON CONFLICT (queue) DO UPDATE
      SET max_wait = excluded.max_wait, updated_at = now(), updated_by = excluded.updated_by
      WHERE w.max_wait IS DISTINCT FROM excluded.max_wait;
    RETURN FOUND;
  END $$;

--
-- Name: rate_left(integer, timestamp with time zone, integer, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.rate_left(rate_limit integer, row_window_start timestamp with time zone, row_count integer, wstart timestamp with time zone) RETURNS integer
    LANGUAGE sql IMMUTABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT CASE WHEN row_window_start > wstart THEN 0
                WHEN row_window_start = wstart THEN rate_limit - row_count
                ELSE rate_limit END
  $$;

--
-- Name: rate_window_start(interval); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.rate_window_start(rate_window interval) RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
    SELECT to_timestamp(floor(extract(epoch FROM now()) / extract(epoch FROM rate_window))
                        * extract(epoch FROM rate_window))
  $$;

--
-- Name: replace_job(bigint, jsonb, timestamp with time zone, integer); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.replace_job(job_id bigint, payload jsonb DEFAULT NULL::jsonb, run_at timestamp with time zone DEFAULT NULL::timestamp with time zone, priority integer DEFAULT NULL::integer) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  #variable_conflict use_variable
  DECLARE
    j record;
    v_state pgbus.job_state;
  BEGIN
    SELECT x.id, x.queue, x.state, x.run_at, x.linked, x.start_by INTO j
      FROM pgbus.job x WHERE x.id = job_id FOR UPDATE;
    IF NOT FOUND THEN
      SELECT h.state INTO v_state FROM pgbus.job_history h WHERE h.id = job_id;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
    END IF;
    v_state := coalesce(j.state, v_state);
    IF NOT v_state = ANY ('{scheduled,available,retryable}'::pgbus.job_state[]) THEN
      RAISE EXCEPTION 'pgbus: job % is %, not waiting: a running or finished job is never replaced; enqueue a new job after it, or cancel it first',
        job_id, v_state USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF payload IS NOT NULL THEN
      PERFORM pgbus.check_payload(j.queue, payload);
      IF EXISTS (SELECT 1 FROM pgbus.setting s WHERE j.queue::text = ANY (s.encrypted_queues)) THEN
        PERFORM pgbus.check_sealed(j.queue, payload);
      END IF;
    END IF;
    IF run_at IS NOT NULL AND j.linked THEN
      RAISE EXCEPTION 'pgbus: job % waits on other jobs or is in a batch, so it runs when they are done and run_at % cannot move it: replace its priority only, or cancel it',
        job_id, run_at USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    IF run_at IS NOT NULL THEN
      PERFORM pgbus.check_run_at(j.queue, run_at);
    END IF;
    -- The claim refuses a job from its start-by deadline on (V43): a run_at there never runs.
    IF run_at >= j.start_by THEN
      RAISE EXCEPTION 'pgbus: run_at % is not before job %''s start-by deadline %: it would never start; give an earlier run_at, or cancel the job and enqueue it again with a later deadline',
        run_at, job_id, j.start_by USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF priority IS NOT NULL AND (priority < -100 OR priority > 100) THEN
      RAISE EXCEPTION 'pgbus: priority % is out of range (job %): use -100 to 100 (lower runs first)',
        priority, job_id USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE pgbus.job x
       SET payload = coalesce(replace_job.payload, x.payload),
           priority = coalesce(replace_job.priority, x.priority),
           run_at = coalesce(replace_job.run_at, x.run_at),
           state = CASE WHEN x.state = ANY ('{scheduled,available}'::pgbus.job_state[])
                        THEN CASE WHEN coalesce(replace_job.run_at, x.run_at) <= now()
                                  THEN 'available' ELSE 'scheduled' END::pgbus.job_state
                        ELSE x.state END
     WHERE x.id = job_id;
    INSERT INTO pgbus.audit (actor, action, queue, job_id, detail)
    VALUES (pgbus.actor(), 'replace', j.queue, job_id,
            jsonb_build_object('fields', to_jsonb(array_remove(ARRAY[
              CASE WHEN payload IS NOT NULL THEN 'payload' END,
              CASE WHEN run_at IS NOT NULL THEN 'run_at' END,
              CASE WHEN priority IS NOT NULL THEN 'priority' END], NULL))));
    IF run_at < j.run_at AND current_setting('pgbus.wake', true) IS DISTINCT FROM 'client' THEN
      PERFORM pgbus.notify(j.queue, run_at);
    END IF;
    RETURN true;
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
-- Name: retry_workflow(bigint, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.retry_workflow(workflow_id bigint, actor text DEFAULT NULL::text, OUT known boolean, OUT replayed integer, OUT revived integer) RETURNS record
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    v_actor text := coalesce(nullif(retry_workflow.actor, ''), pgbus.actor());
    v_dead bigint[];
    v_set bigint[];
    v_revive bigint[] := '{}';
    v_next bigint[];
  BEGIN
    PERFORM 1 FROM pgbus.workflow w WHERE w.id = retry_workflow.workflow_id FOR UPDATE;
    known := FOUND;
    replayed := 0;
    revived := 0;
    IF NOT known THEN
      RETURN;
    END IF;
    v_dead := ARRAY(SELECT j.id FROM pgbus.job j JOIN pgbus.workflow_job m ON m.job_id = j.id
                     WHERE m.workflow_id = retry_workflow.workflow_id AND j.state = 'dead'
                     ORDER BY j.id FOR UPDATE OF j);
    v_set := v_dead;
    LOOP
      v_next := ARRAY(
        SELECT j.id FROM pgbus.job_all j JOIN pgbus.workflow_job m ON m.job_id = j.id
         WHERE m.workflow_id = retry_workflow.workflow_id AND j.state = 'cancelled'
           AND NOT j.id = ANY (v_revive)
           AND EXISTS (SELECT 1 FROM pgbus.job_dependency d
                        WHERE d.job_id = j.id AND d.state = 'failed' AND d.on_failure = 'cancel')
           AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency d
                            WHERE d.job_id = j.id
                              AND (d.state = 'not_taken'
                                   OR (d.state = 'failed' AND NOT d.depends_on = ANY (v_set)))));
      EXIT WHEN cardinality(v_next) = 0;
      v_revive := v_revive || v_next;
      v_set := v_set || v_next;
    END LOOP;
    IF cardinality(v_revive) > 0 THEN
      -- Archived ones first come back to the live table (V33: the same columns).
      WITH moved AS (
        DELETE FROM pgbus.job_history h WHERE h.id = ANY (v_revive) RETURNING h.*)
      INSERT INTO pgbus.job OVERRIDING SYSTEM VALUE SELECT * FROM moved;
      UPDATE pgbus.job j
         SET state = 'scheduled', run_at = now() + interval '36500 days', finalized_at = NULL,
             linked = true
       WHERE j.id = ANY (v_revive) AND j.state = 'cancelled';
      GET DIAGNOSTICS revived = ROW_COUNT;
    END IF;
    UPDATE pgbus.job_dependency d SET state = 'waiting'
     WHERE d.state = 'failed'
       AND (d.job_id = ANY (v_revive) OR (d.depends_on = ANY (v_dead) AND d.on_failure = 'hold'));
    WITH acted AS (
      UPDATE pgbus.job d
         SET state = 'available', run_at = now(), finalized_at = NULL, batch_id = NULL,
             max_attempts = d.attempt + (d.max_attempts::integer - d.attempt_base),
             attempt_base = d.attempt
       WHERE d.id = ANY (v_dead) AND d.state = 'dead'
         AND (d.unique_key IS NULL OR NOT EXISTS (
               SELECT 1 FROM pgbus.job o
                WHERE o.queue::text = d.queue::text AND o.unique_key::text = d.unique_key::text
                  AND o.state IN ('scheduled', 'available', 'running', 'retryable')))
      RETURNING d.id, d.queue),
    audited AS (
      INSERT INTO pgbus.audit (actor, action, queue, job_id)
      SELECT v_actor, 'replay', a.queue::text, a.id FROM acted a)
    SELECT count(*) INTO replayed
      FROM (SELECT pgbus.notify(a.queue, now()) FROM acted a) n;
    IF replayed + revived > 0 THEN
      UPDATE pgbus.workflow w SET cancelled_at = NULL, cancelled_by = NULL
       WHERE w.id = retry_workflow.workflow_id AND w.cancelled_at IS NOT NULL
         AND cardinality(v_dead) > 0;
    END IF;
    INSERT INTO pgbus.audit (actor, action, queue, detail)
    VALUES (v_actor, 'workflow_retry', '*',
            jsonb_build_object('workflow', retry_workflow.workflow_id, 'replayed', replayed,
                               'revived', revived));
  END $$;

--
-- Name: schedule_cron_valid(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.schedule_cron_valid(cron text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $_$
  BEGIN
    IF schedule_cron_valid.cron ~ '^\s*(@[A-Za-z]+|[0-9A-Za-z*/,?#-]+(\s+[0-9A-Za-z*/,?#-]+){4,5})\s*$' THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: invalid cron expression % for a schedule: use 5 fields (minute hour day-of-month month day-of-week, e.g. ''0 3 * * *''), 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly',
      pg_catalog.quote_literal(pg_catalog.left(schedule_cron_valid.cron, 80))
      USING ERRCODE = 'check_violation';
  END $_$;

--
-- Name: schedule_overlap_valid(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.schedule_overlap_valid(overlap text) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    IF schedule_overlap_valid.overlap IN ('allow', 'skip', 'queue', 'cancel_previous') THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: unknown overlap policy % for a schedule: use allow, skip, queue or cancel_previous',
      pg_catalog.quote_literal(pg_catalog.left(schedule_overlap_valid.overlap, 80))
      USING ERRCODE = 'check_violation';
  END $$;

--
-- Name: schedule_zone_valid(text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.schedule_zone_valid(zone text) RETURNS boolean
    LANGUAGE plpgsql STABLE STRICT
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    PERFORM pg_catalog.timezone(schedule_zone_valid.zone, pg_catalog.now());
    RETURN true;
  EXCEPTION WHEN invalid_parameter_value THEN
    RAISE EXCEPTION 'pgbus: unknown time zone % for a schedule: use an IANA zone such as Europe/Berlin, or UTC',
      pg_catalog.quote_literal(pg_catalog.left(schedule_zone_valid.zone, 80))
      USING ERRCODE = 'check_violation';
  END $$;

--
-- Name: set_start_by(bigint, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.set_start_by(job_id bigint, start_by timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  DECLARE
    j record;
  BEGIN
    IF set_start_by.start_by IS NULL OR NOT isfinite(set_start_by.start_by) THEN
      RAISE EXCEPTION 'pgbus: start_by % is not a deadline (job %): give a finite time after now, or enqueue without start_by',
        coalesce(set_start_by.start_by::text, 'NULL'), set_start_by.job_id
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT x.queue, x.run_at, x.linked INTO j
      FROM pgbus.job x
     WHERE x.id = set_start_by.job_id
       AND x.state = ANY ('{scheduled,available}'::pgbus.job_state[]) AND x.attempt = 0;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    IF set_start_by.start_by <= now() THEN
      RAISE EXCEPTION 'pgbus: start_by % is not after now (%) (queue %): give a deadline in the future, or enqueue without start_by',
        set_start_by.start_by, now(), j.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT j.linked AND set_start_by.start_by <= j.run_at THEN
      RAISE EXCEPTION 'pgbus: start_by % is not after the job''s run_at % (queue %): it could never start; give a later deadline or an earlier run_at',
        set_start_by.start_by, j.run_at, j.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE pgbus.job x SET start_by = set_start_by.start_by WHERE x.id = set_start_by.job_id;
    RETURN true;
  END $$;

--
-- Name: tell_engines(); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.tell_engines() RETURNS trigger
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    PERFORM pg_catalog.pg_notify(TG_ARGV[0], '');
    RETURN NULL;
  END $$;

--
-- Name: tick(text[], text, boolean, bigint[], integer[], double precision, text, text, text); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.tick(queues text[], worker text, beat boolean, job_ids bigint[], job_attempts integer[], lease_ms double precision, probe_channel text, probe_payload text, leader_name text) RETURNS TABLE(queue text, run_at timestamp with time zone, due boolean, leader text, leader_ms bigint, node_found boolean, renewed integer)
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  #variable_conflict use_column
  DECLARE
    v_found   boolean := NULL;
    v_renewed integer := 0;
  BEGIN
    IF tick.beat THEN
      UPDATE pgbus.node n SET seen_at = now() WHERE n.worker_id = tick.worker;
      v_found := FOUND;
      IF cardinality(tick.job_ids) > 0 THEN
        -- SKIP LOCKED: a held job whose row another transaction has locked is being finished
        -- (a worker's completion, maybe of a group of jobs) or renewed right now; the tick never
        -- waits for it. Waiting deadlocked with a group's completion, which locks its rows in
        -- another order (seen at 1,000 jobs/s under a held horizon). A job skipped here is
        -- renewed by the next beat, long before its lease runs out.
        UPDATE pgbus.job j
           SET lease_expires_at = now() + tick.lease_ms * interval '1 millisecond'
          FROM (SELECT x.id
                  FROM pgbus.job x
                  JOIN unnest(tick.job_ids, tick.job_attempts) AS held(id, attempt)
                    ON x.id = held.id AND x.attempt = held.attempt
                 WHERE x.state::text = 'running'  -- by primary key, never job_lease_idx (below)
                   FOR UPDATE OF x SKIP LOCKED) k
         WHERE j.id = k.id;
        GET DIAGNOSTICS v_renewed = ROW_COUNT;
      END IF;
    END IF;
    IF tick.probe_channel IS NOT NULL THEN
      PERFORM pg_notify(tick.probe_channel, tick.probe_payload);
    END IF;
    RETURN QUERY
      SELECT NULL::text, NULL::timestamptz, NULL::boolean, l.holder,
             ceil(extract(epoch FROM l.expires_at - now())::numeric * 1000.0)::bigint,
             v_found, v_renewed
        FROM (SELECT 1) one
        LEFT JOIN pgbus.leader l ON l.name = tick.leader_name AND l.expires_at > now()
              -- A lease no elector wrote (LeaderStore.FORGED) is free; 'infinity' would fail the
              -- subtraction above, and with it every JVM's tick.
              AND l.expires_at <= now() + interval '1 hour';
    RETURN QUERY
      SELECT q.queue, h.run_at, h.run_at <= now(), NULL::text, NULL::bigint, NULL::boolean,
             NULL::integer
        FROM unnest(tick.queues) AS q(queue)
        CROSS JOIN LATERAL (SELECT pgbus.queue_head(q.queue) AS run_at) h
       WHERE h.run_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue::text = q.queue);
  END $$;

--
-- Name: wake(text[], timestamp with time zone[]); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.wake(queues text[], dues timestamp with time zone[] DEFAULT NULL::timestamp with time zone[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
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

--
-- Name: wake_coalesced(pgbus.queue_name, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.wake_coalesced(queue pgbus.queue_name, due timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
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

--
-- Name: wake_first(text, timestamp with time zone); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.wake_first(queue text, run_at timestamp with time zone) RETURNS boolean
    LANGUAGE plpgsql
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

--
-- Name: workflow_of(bigint); Type: FUNCTION; Schema: pgbus; Owner: -
--

CREATE FUNCTION pgbus.workflow_of(job_id bigint) RETURNS bigint
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pgbus', 'pg_temp'
    AS $$
  BEGIN
    -- PL/pgSQL, not SQL, here and below: a migration to a version before V52 (the tests' upgrade
    -- runs) creates these functions before their tables exist, and an SQL body is checked then.
    RETURN (SELECT w.workflow_id FROM pgbus.workflow_job w WHERE w.job_id = workflow_of.job_id);
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
    schedule text,
    CONSTRAINT audit_actor_check CHECK (((length(actor) >= 1) AND (length(actor) <= 256))),
    CONSTRAINT audit_schedule_check CHECK (((length(schedule) >= 1) AND (length(schedule) <= 63)))
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
-- Name: job_history; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_history (
    id bigint NOT NULL,
    queue pgbus.queue_name NOT NULL,
    state pgbus.job_state NOT NULL,
    priority pgbus.job_priority NOT NULL,
    payload jsonb NOT NULL,
    attempt integer NOT NULL,
    max_attempts pgbus.job_max_attempts NOT NULL,
    run_at timestamp with time zone NOT NULL,
    attempted_at timestamp with time zone,
    attempted_by text,
    lease_expires_at timestamp with time zone,
    errors jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    finalized_at timestamp with time zone NOT NULL,
    unique_key pgbus.job_unique_key,
    trace_parent pgbus.trace_parent,
    trace_state pgbus.trace_state,
    enqueued_by pgbus.job_enqueued_by,
    correlation_id pgbus.job_correlation_id,
    cancel_attempt pgbus.job_cancel_attempt,
    progress pgbus.job_progress,
    result pgbus.job_result,
    concurrency_key pgbus.job_concurrency_key,
    batch_id bigint,
    linked boolean NOT NULL,
    lane bigint,
    attempt_base integer NOT NULL,
    start_by timestamp with time zone,
    run_as text,
    CONSTRAINT job_history_state_chk CHECK ((state = ANY ('{completed,cancelled}'::pgbus.job_state[])))
)
PARTITION BY RANGE (finalized_at);

--
-- Name: job_all; Type: VIEW; Schema: pgbus; Owner: -
--

CREATE VIEW pgbus.job_all AS
 SELECT job.id,
    job.queue,
    job.state,
    job.priority,
    job.payload,
    job.attempt,
    job.max_attempts,
    job.run_at,
    job.attempted_at,
    job.attempted_by,
    job.lease_expires_at,
    job.errors,
    job.created_at,
    job.finalized_at,
    job.unique_key,
    job.trace_parent,
    job.trace_state,
    job.enqueued_by,
    job.correlation_id,
    job.cancel_attempt,
    job.progress,
    job.result,
    job.concurrency_key,
    job.batch_id,
    job.linked,
    job.lane,
    job.attempt_base,
    job.start_by,
    job.run_as
   FROM pgbus.job
UNION ALL
 SELECT job_history.id,
    job_history.queue,
    job_history.state,
    job_history.priority,
    job_history.payload,
    job_history.attempt,
    job_history.max_attempts,
    job_history.run_at,
    job_history.attempted_at,
    job_history.attempted_by,
    job_history.lease_expires_at,
    job_history.errors,
    job_history.created_at,
    job_history.finalized_at,
    job_history.unique_key,
    job_history.trace_parent,
    job_history.trace_state,
    job_history.enqueued_by,
    job_history.correlation_id,
    job_history.cancel_attempt,
    job_history.progress,
    job_history.result,
    job_history.concurrency_key,
    job_history.batch_id,
    job_history.linked,
    job_history.lane,
    job_history.attempt_base,
    job_history.start_by,
    job_history.run_as
   FROM pgbus.job_history;

--
-- Name: job_dependency; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_dependency (
    depends_on bigint NOT NULL,
    job_id bigint NOT NULL,
    on_failure text NOT NULL,
    state text DEFAULT 'waiting'::text NOT NULL,
    result jsonb,
    kind text DEFAULT 'success'::text NOT NULL,
    predicate jsonpath,
    CONSTRAINT job_dependency_kind_chk CHECK (((kind = ANY (ARRAY['success'::text, 'failure'::text, 'result'::text])) AND ((predicate IS NOT NULL) = (kind = 'result'::text)))),
    CONSTRAINT job_dependency_on_failure_check CHECK ((on_failure = ANY (ARRAY['hold'::text, 'cancel'::text]))),
    CONSTRAINT job_dependency_result_check CHECK (((result IS NULL) OR (octet_length((result)::text) <= 65536))),
    CONSTRAINT job_dependency_state_check CHECK ((state = ANY (ARRAY['waiting'::text, 'completed'::text, 'failed'::text, 'not_taken'::text])))
);

--
-- Name: job_history_count; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_history_count (
    part oid NOT NULL,
    queue text NOT NULL,
    state pgbus.job_state NOT NULL,
    jobs bigint NOT NULL
);

--
-- Name: job_history_counted; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_history_counted (
    part oid NOT NULL,
    counted_at timestamp with time zone DEFAULT now() NOT NULL
);

--
-- Name: job_history_default; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.job_history_default (
    id bigint NOT NULL,
    queue pgbus.queue_name NOT NULL,
    state pgbus.job_state NOT NULL,
    priority pgbus.job_priority NOT NULL,
    payload jsonb NOT NULL,
    attempt integer NOT NULL,
    max_attempts pgbus.job_max_attempts NOT NULL,
    run_at timestamp with time zone NOT NULL,
    attempted_at timestamp with time zone,
    attempted_by text,
    lease_expires_at timestamp with time zone,
    errors jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    finalized_at timestamp with time zone NOT NULL,
    unique_key pgbus.job_unique_key,
    trace_parent pgbus.trace_parent,
    trace_state pgbus.trace_state,
    enqueued_by pgbus.job_enqueued_by,
    correlation_id pgbus.job_correlation_id,
    cancel_attempt pgbus.job_cancel_attempt,
    progress pgbus.job_progress,
    result pgbus.job_result,
    concurrency_key pgbus.job_concurrency_key,
    batch_id bigint,
    linked boolean NOT NULL,
    lane bigint,
    attempt_base integer NOT NULL,
    start_by timestamp with time zone,
    run_as text,
    CONSTRAINT job_history_state_chk CHECK ((state = ANY ('{completed,cancelled}'::pgbus.job_state[])))
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
    heartbeat_ttl_ms integer,
    CONSTRAINT node_heartbeat_ttl_chk CHECK (((heartbeat_ttl_ms >= 1000) AND (heartbeat_ttl_ms <= 3600000))),
    CONSTRAINT node_mode_check CHECK ((mode = ANY (ARRAY['notify'::text, 'polling'::text])))
);

--
-- Name: queue_fair_pass; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_fair_pass (
    queue pgbus.queue_name NOT NULL,
    tenant text NOT NULL,
    pass double precision NOT NULL
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
    rate_limit integer,
    rate_window interval,
    rate_window_start timestamp with time zone,
    rate_count integer DEFAULT 0 NOT NULL,
    key_fifo boolean DEFAULT false NOT NULL,
    key_fifo_skip_dead boolean DEFAULT false NOT NULL,
    build text,
    fair_key text,
    fair_weights jsonb,
    fair_clock double precision DEFAULT 0 NOT NULL,
    CONSTRAINT queue_limit_build_check CHECK ((build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'::text)),
    CONSTRAINT queue_limit_fair_key_chk CHECK ((fair_key = 'concurrency_key'::text)),
    CONSTRAINT queue_limit_fair_weights_chk CHECK ((jsonb_typeof(fair_weights) = 'object'::text)),
    CONSTRAINT queue_limit_global_chk CHECK (((global_concurrency >= 1) AND (global_concurrency <= 100000))),
    CONSTRAINT queue_limit_key_chk CHECK (((key_concurrency >= 1) AND (key_concurrency <= 100000))),
    CONSTRAINT queue_limit_rate_chk CHECK (((rate_limit >= 1) AND (rate_limit <= 1000000))),
    CONSTRAINT queue_limit_rate_pair_chk CHECK (((rate_limit IS NULL) = (rate_window IS NULL))),
    CONSTRAINT queue_limit_rate_window_chk CHECK (((rate_window >= '00:00:00.001'::interval) AND (rate_window <= '1 day'::interval)))
);

--
-- Name: queue_max_wait; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_max_wait (
    queue pgbus.queue_name NOT NULL,
    max_wait interval NOT NULL,
    build text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text,
    CONSTRAINT queue_max_wait_build_chk CHECK ((build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'::text)),
    CONSTRAINT queue_max_wait_chk CHECK (((max_wait >= '00:00:00.001'::interval) AND (max_wait <= '36500 days'::interval)))
);

--
-- Name: queue_minute; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_minute (
    queue pgbus.queue_name NOT NULL,
    minute timestamp with time zone NOT NULL,
    completed integer NOT NULL,
    failed integer NOT NULL,
    dead integer NOT NULL,
    wait_p50_ms bigint,
    wait_p95_ms bigint,
    wait_p99_ms bigint,
    run_p50_ms bigint,
    run_p95_ms bigint,
    run_p99_ms bigint,
    CONSTRAINT queue_minute_completed_check CHECK ((completed >= 0)),
    CONSTRAINT queue_minute_dead_check CHECK ((dead >= 0)),
    CONSTRAINT queue_minute_failed_check CHECK ((failed >= 0)),
    CONSTRAINT queue_minute_minute_check CHECK ((minute = date_trunc('minute'::text, minute)))
);

--
-- Name: queue_minute_mark; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.queue_minute_mark (
    one boolean DEFAULT true NOT NULL,
    rolled_to timestamp with time zone NOT NULL,
    CONSTRAINT queue_minute_mark_one_check CHECK (one),
    CONSTRAINT queue_minute_mark_rolled_to_check CHECK ((rolled_to = date_trunc('minute'::text, rolled_to)))
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
    overlap text DEFAULT 'allow'::text NOT NULL,
    last_job_id bigint,
    last_outcome text,
    CONSTRAINT schedule_catch_up_chk CHECK ((((misfire = 'catch_up'::text) = (catch_up_limit IS NOT NULL)) AND ((catch_up_limit >= 1) AND (catch_up_limit <= 1000)))),
    CONSTRAINT schedule_cron_chk CHECK (((length(cron) >= 1) AND (length(cron) <= 200))),
    CONSTRAINT schedule_last_outcome_chk CHECK ((last_outcome = ANY (ARRAY['enqueued'::text, 'skipped'::text, 'queued'::text, 'cancelled_previous'::text]))),
    CONSTRAINT schedule_max_attempts_chk CHECK (((max_attempts >= 1) AND (max_attempts <= 1000))),
    CONSTRAINT schedule_misfire_chk CHECK ((misfire = ANY (ARRAY['skip'::text, 'run_once'::text, 'catch_up'::text]))),
    CONSTRAINT schedule_name_chk CHECK ((name ~ '^[A-Za-z][A-Za-z0-9_-]{0,62}$'::text)),
    CONSTRAINT schedule_overlap_chk CHECK (pgbus.schedule_overlap_valid(overlap)),
    CONSTRAINT schedule_payload_chk CHECK (((jsonb_typeof(payload) <> 'null'::text) AND (octet_length((payload)::text) <= 65536))),
    CONSTRAINT schedule_priority_chk CHECK (((priority >= '-100'::integer) AND (priority <= 100))),
    CONSTRAINT schedule_source_chk CHECK ((source = ANY (ARRAY['config'::text, 'api'::text]))),
    CONSTRAINT schedule_updated_by_chk CHECK (((length(updated_by) >= 1) AND (length(updated_by) <= 255))),
    CONSTRAINT schedule_zone_chk CHECK (((length(zone) >= 1) AND (length(zone) <= 64)))
);

--
-- Name: schema_compat; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.schema_compat (
    one boolean DEFAULT true NOT NULL,
    oldest_build text NOT NULL,
    newest_build text,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT schema_compat_newest_build_check CHECK ((newest_build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'::text)),
    CONSTRAINT schema_compat_oldest_build_check CHECK ((oldest_build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'::text)),
    CONSTRAINT schema_compat_one_check CHECK (one)
);

--
-- Name: setting; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.setting (
    id boolean DEFAULT true NOT NULL,
    max_payload_bytes integer DEFAULT 1048576 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_by text,
    build text,
    wake_mode text DEFAULT 'coalesced'::text NOT NULL,
    encrypted_queues text[],
    max_wait_queues text[],
    CONSTRAINT setting_build_check CHECK ((build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'::text)),
    CONSTRAINT setting_id_check CHECK (id),
    CONSTRAINT setting_max_payload_bytes_check CHECK ((max_payload_bytes > 0)),
    CONSTRAINT setting_wake_mode_check CHECK ((wake_mode = ANY (ARRAY['coalesced'::text, 'in_transaction'::text])))
);

--
-- Name: unique_claim; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.unique_claim (
    queue text NOT NULL,
    unique_key text NOT NULL,
    job_id bigint,
    until timestamp with time zone NOT NULL,
    states pgbus.job_state[] DEFAULT '{completed}'::pgbus.job_state[] NOT NULL,
    CONSTRAINT unique_claim_unique_key_check CHECK (((length(unique_key) >= 1) AND (length(unique_key) <= 255)))
);

--
-- Name: wake_clock; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE UNLOGGED TABLE pgbus.wake_clock (
    queue pgbus.queue_name NOT NULL,
    later boolean NOT NULL,
    sent_at timestamp with time zone NOT NULL
)
WITH (fillfactor='50');

--
-- Name: workflow; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.workflow (
    id bigint NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    created_by text,
    cancelled_at timestamp with time zone,
    cancelled_by text,
    CONSTRAINT workflow_name_chk CHECK (((length(name) >= 1) AND (length(name) <= 200)))
);

--
-- Name: workflow_id_seq; Type: SEQUENCE; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.workflow ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME pgbus.workflow_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: workflow_job; Type: TABLE; Schema: pgbus; Owner: -
--

CREATE TABLE pgbus.workflow_job (
    job_id bigint NOT NULL,
    workflow_id bigint NOT NULL,
    node text,
    queue text NOT NULL
);

--
-- Name: job_history_default; Type: TABLE ATTACH; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_history ATTACH PARTITION pgbus.job_history_default DEFAULT;

--
-- Name: audit audit_action_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.audit
    ADD CONSTRAINT audit_action_check CHECK ((action = ANY (ARRAY['cancel'::text, 'replay'::text, 'pause'::text, 'resume'::text, 'retry'::text, 'delete'::text, 'schedule_create'::text, 'schedule_update'::text, 'schedule_pause'::text, 'schedule_resume'::text, 'schedule_delete'::text, 'schedule_trigger'::text, 'limit'::text, 'schedule_skip'::text, 'reencrypt'::text, 'replace'::text, 'workflow_cancel'::text, 'workflow_retry'::text]))) NOT VALID;

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
-- Name: job_cancel_attempt job_cancel_attempt_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_cancel_attempt
    ADD CONSTRAINT job_cancel_attempt_check CHECK ((VALUE >= 1)) NOT VALID;

--
-- Name: job_concurrency_key job_concurrency_key_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_concurrency_key
    ADD CONSTRAINT job_concurrency_key_chk CHECK (((length(VALUE) >= 1) AND (length(VALUE) <= 255))) NOT VALID;

--
-- Name: job_correlation_id job_correlation_id_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_correlation_id
    ADD CONSTRAINT job_correlation_id_check CHECK (((length(VALUE) >= 1) AND (length(VALUE) <= 128))) NOT VALID;

--
-- Name: job_dependency job_dependency_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_dependency
    ADD CONSTRAINT job_dependency_pkey PRIMARY KEY (depends_on, job_id);

--
-- Name: job_enqueued_by job_enqueued_by_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_enqueued_by
    ADD CONSTRAINT job_enqueued_by_check CHECK (((length(VALUE) >= 1) AND (length(VALUE) <= 256))) NOT VALID;

--
-- Name: job_history_count job_history_count_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_history_count
    ADD CONSTRAINT job_history_count_pkey PRIMARY KEY (part, queue, state);

--
-- Name: job_history_counted job_history_counted_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_history_counted
    ADD CONSTRAINT job_history_counted_pkey PRIMARY KEY (part);

--
-- Name: job_history job_history_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_history
    ADD CONSTRAINT job_history_pkey PRIMARY KEY (id, finalized_at);

--
-- Name: job_history_default job_history_default_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job_history_default
    ADD CONSTRAINT job_history_default_pkey PRIMARY KEY (id, finalized_at);

--
-- Name: job_history job_history_run_as_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job_history
    ADD CONSTRAINT job_history_run_as_check CHECK (((length(run_as) >= 1) AND (length(run_as) <= 256))) NOT VALID;

--
-- Name: job_max_attempts job_max_attempts_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_max_attempts
    ADD CONSTRAINT job_max_attempts_check CHECK ((VALUE >= 1)) NOT VALID;

--
-- Name: job job_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.job
    ADD CONSTRAINT job_pkey PRIMARY KEY (id);

--
-- Name: job_priority job_priority_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_priority
    ADD CONSTRAINT job_priority_check CHECK (((VALUE >= '-100'::integer) AND (VALUE <= 100))) NOT VALID;

--
-- Name: job_progress job_progress_shape; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_progress
    ADD CONSTRAINT job_progress_shape CHECK (pgbus.job_progress_valid(VALUE)) NOT VALID;

--
-- Name: job_result job_result_size_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_result
    ADD CONSTRAINT job_result_size_chk CHECK (pgbus.job_result_valid(VALUE)) NOT VALID;

--
-- Name: job job_run_as_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job
    ADD CONSTRAINT job_run_as_check CHECK (((length(run_as) >= 1) AND (length(run_as) <= 256))) NOT VALID;

--
-- Name: trace_parent job_trace_parent_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.trace_parent
    ADD CONSTRAINT job_trace_parent_check CHECK (((VALUE ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'::text) AND (substr(VALUE, 4, 32) <> '00000000000000000000000000000000'::text) AND (substr(VALUE, 37, 16) <> '0000000000000000'::text))) NOT VALID;

--
-- Name: trace_state job_trace_state_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.trace_state
    ADD CONSTRAINT job_trace_state_check CHECK (((length(VALUE) <= 512) AND (VALUE ~ '^[\x20-\x7e]*$'::text))) NOT VALID;

--
-- Name: job job_trace_state_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.job
    ADD CONSTRAINT job_trace_state_check CHECK (((trace_state IS NULL) OR (trace_parent IS NOT NULL))) NOT VALID;

--
-- Name: job_unique_key job_unique_key_check; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER DOMAIN pgbus.job_unique_key
    ADD CONSTRAINT job_unique_key_check CHECK (((length(VALUE) >= 1) AND (length(VALUE) <= 255))) NOT VALID;

--
-- Name: leader leader_expires_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.leader
    ADD CONSTRAINT leader_expires_chk CHECK ((expires_at <= (now() + '01:00:00'::interval))) NOT VALID;

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
-- Name: queue_fair_pass queue_fair_pass_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_fair_pass
    ADD CONSTRAINT queue_fair_pass_pkey PRIMARY KEY (queue, tenant);

--
-- Name: queue_limit queue_limit_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_limit
    ADD CONSTRAINT queue_limit_pkey PRIMARY KEY (queue);

--
-- Name: queue_max_wait queue_max_wait_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_max_wait
    ADD CONSTRAINT queue_max_wait_pkey PRIMARY KEY (queue);

--
-- Name: queue_minute_mark queue_minute_mark_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_minute_mark
    ADD CONSTRAINT queue_minute_mark_pkey PRIMARY KEY (one);

--
-- Name: queue_minute queue_minute_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_minute
    ADD CONSTRAINT queue_minute_pkey PRIMARY KEY (queue, minute);

--
-- Name: queue_pause queue_pause_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.queue_pause
    ADD CONSTRAINT queue_pause_pkey PRIMARY KEY (queue);

--
-- Name: schedule schedule_cron_shape_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.schedule
    ADD CONSTRAINT schedule_cron_shape_chk CHECK (pgbus.schedule_cron_valid(cron)) NOT VALID;

--
-- Name: schedule schedule_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.schedule
    ADD CONSTRAINT schedule_pkey PRIMARY KEY (name);

--
-- Name: schedule schedule_zone_known_chk; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.schedule
    ADD CONSTRAINT schedule_zone_known_chk CHECK (pgbus.schedule_zone_valid(zone)) NOT VALID;

--
-- Name: schema_compat schema_compat_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.schema_compat
    ADD CONSTRAINT schema_compat_pkey PRIMARY KEY (one);

--
-- Name: setting setting_max_payload_bytes_range; Type: CHECK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE pgbus.setting
    ADD CONSTRAINT setting_max_payload_bytes_range CHECK (((max_payload_bytes >= 2) AND (max_payload_bytes <= 268435456))) NOT VALID;

--
-- Name: setting setting_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.setting
    ADD CONSTRAINT setting_pkey PRIMARY KEY (id);

--
-- Name: unique_claim unique_claim_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.unique_claim
    ADD CONSTRAINT unique_claim_pkey PRIMARY KEY (queue, unique_key);

--
-- Name: wake_clock wake_clock_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.wake_clock
    ADD CONSTRAINT wake_clock_pkey PRIMARY KEY (queue, later);

--
-- Name: workflow_job workflow_job_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.workflow_job
    ADD CONSTRAINT workflow_job_pkey PRIMARY KEY (job_id);

--
-- Name: workflow workflow_pkey; Type: CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.workflow
    ADD CONSTRAINT workflow_pkey PRIMARY KEY (id);

--
-- Name: audit_job_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX audit_job_idx ON pgbus.audit USING btree (job_id) WHERE (job_id IS NOT NULL);

--
-- Name: audit_queue_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX audit_queue_idx ON pgbus.audit USING btree (queue, id);

--
-- Name: audit_schedule_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX audit_schedule_idx ON pgbus.audit USING btree (schedule, id) WHERE (schedule IS NOT NULL);

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
-- Name: job_fair_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_fair_idx ON pgbus.job USING btree (queue, concurrency_key, priority, run_at, id) WHERE ((concurrency_key IS NOT NULL) AND (state = ANY (ARRAY['available'::pgbus.job_state, 'scheduled'::pgbus.job_state, 'retryable'::pgbus.job_state])));

--
-- Name: job_finalized_queue_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_finalized_queue_idx ON pgbus.job USING btree (state, finalized_at) INCLUDE (queue) WHERE (state = ANY (ARRAY['completed'::pgbus.job_state, 'dead'::pgbus.job_state, 'cancelled'::pgbus.job_state]));

--
-- Name: job_history_batch_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_batch_idx ON ONLY pgbus.job_history USING btree (batch_id) WHERE (batch_id IS NOT NULL);

--
-- Name: job_history_created_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_created_idx ON ONLY pgbus.job_history USING btree (created_at);

--
-- Name: job_history_default_batch_id_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_default_batch_id_idx ON pgbus.job_history_default USING btree (batch_id) WHERE (batch_id IS NOT NULL);

--
-- Name: job_history_default_created_at_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_default_created_at_idx ON pgbus.job_history_default USING btree (created_at);

--
-- Name: job_history_finalized_brin; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_finalized_brin ON ONLY pgbus.job_history USING brin (finalized_at) WITH (pages_per_range='32');

--
-- Name: job_history_default_finalized_at_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_default_finalized_at_idx ON pgbus.job_history_default USING brin (finalized_at) WITH (pages_per_range='32');

--
-- Name: job_history_queue_state_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_queue_state_idx ON ONLY pgbus.job_history USING btree (queue, state, id);

--
-- Name: job_history_default_queue_state_id_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_default_queue_state_id_idx ON pgbus.job_history_default USING btree (queue, state, id);

--
-- Name: job_history_unique_key_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_unique_key_idx ON ONLY pgbus.job_history USING btree (unique_key) WHERE (unique_key IS NOT NULL);

--
-- Name: job_history_default_unique_key_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_history_default_unique_key_idx ON pgbus.job_history_default USING btree (unique_key) WHERE (unique_key IS NOT NULL);

--
-- Name: job_key_running_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_key_running_idx ON pgbus.job USING btree (queue, concurrency_key) WHERE ((state = 'running'::pgbus.job_state) AND (concurrency_key IS NOT NULL));

--
-- Name: job_key_waiting_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_key_waiting_idx ON pgbus.job USING btree (queue, concurrency_key, id) WHERE ((concurrency_key IS NOT NULL) AND (state = ANY (ARRAY['available'::pgbus.job_state, 'scheduled'::pgbus.job_state, 'retryable'::pgbus.job_state, 'dead'::pgbus.job_state])));

--
-- Name: job_lease_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_lease_idx ON pgbus.job USING btree (lease_expires_at) WHERE (state = 'running'::pgbus.job_state);

--
-- Name: job_queue_state_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_queue_state_idx ON pgbus.job USING btree (queue, state, id);

--
-- Name: job_start_by_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_start_by_idx ON pgbus.job USING btree (start_by) WHERE (start_by IS NOT NULL);

--
-- Name: job_unique_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE UNIQUE INDEX job_unique_idx ON pgbus.job USING btree (queue, unique_key) WHERE ((unique_key IS NOT NULL) AND (state = ANY (ARRAY['scheduled'::pgbus.job_state, 'available'::pgbus.job_state, 'running'::pgbus.job_state, 'retryable'::pgbus.job_state])));

--
-- Name: job_unique_key_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX job_unique_key_idx ON pgbus.job USING btree (unique_key) WHERE (unique_key IS NOT NULL);

--
-- Name: queue_minute_minute_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX queue_minute_minute_idx ON pgbus.queue_minute USING btree (minute);

--
-- Name: schedule_due_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX schedule_due_idx ON pgbus.schedule USING btree (next_run_at) WHERE (NOT paused);

--
-- Name: unique_claim_until_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX unique_claim_until_idx ON pgbus.unique_claim USING btree (until);

--
-- Name: workflow_job_workflow_idx; Type: INDEX; Schema: pgbus; Owner: -
--

CREATE INDEX workflow_job_workflow_idx ON pgbus.workflow_job USING btree (workflow_id, job_id);

--
-- Name: job_history_default_batch_id_idx; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_batch_idx ATTACH PARTITION pgbus.job_history_default_batch_id_idx;

--
-- Name: job_history_default_created_at_idx; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_created_idx ATTACH PARTITION pgbus.job_history_default_created_at_idx;

--
-- Name: job_history_default_finalized_at_idx; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_finalized_brin ATTACH PARTITION pgbus.job_history_default_finalized_at_idx;

--
-- Name: job_history_default_pkey; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_pkey ATTACH PARTITION pgbus.job_history_default_pkey;

--
-- Name: job_history_default_queue_state_id_idx; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_queue_state_idx ATTACH PARTITION pgbus.job_history_default_queue_state_id_idx;

--
-- Name: job_history_default_unique_key_idx; Type: INDEX ATTACH; Schema: pgbus; Owner: -
--

ALTER INDEX pgbus.job_history_unique_key_idx ATTACH PARTITION pgbus.job_history_default_unique_key_idx;

--
-- Name: job_queue_state_stats; Type: STATISTICS; Schema: pgbus; Owner: -
--

CREATE STATISTICS pgbus.job_queue_state_stats (mcv) ON queue, state FROM pgbus.job;

--
-- Name: job_dependency job_dependency_linked; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE CONSTRAINT TRIGGER job_dependency_linked AFTER INSERT ON pgbus.job_dependency DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pgbus.dependency_linked();

--
-- Name: job_history job_history_count_delete; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER job_history_count_delete AFTER DELETE ON pgbus.job_history REFERENCING OLD TABLE AS job_history_old FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();

--
-- Name: job_history job_history_count_insert; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER job_history_count_insert AFTER INSERT ON pgbus.job_history REFERENCING NEW TABLE AS job_history_new FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();

--
-- Name: job_history job_history_count_truncate; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER job_history_count_truncate AFTER TRUNCATE ON pgbus.job_history FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();

--
-- Name: job_history job_history_count_update; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER job_history_count_update AFTER UPDATE ON pgbus.job_history REFERENCING OLD TABLE AS job_history_old NEW TABLE AS job_history_new FOR EACH STATEMENT EXECUTE FUNCTION pgbus.job_history_count_delta();

--
-- Name: job job_wake; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE CONSTRAINT TRIGGER job_wake AFTER INSERT ON pgbus.job DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((((new.run_at > now()) OR (current_setting('pgbus.wake_now'::text, true) IS DISTINCT FROM (new.queue)::text)) AND pgbus.wake_first((new.queue)::text, new.run_at))) EXECUTE FUNCTION pgbus.job_wake();

--
-- Name: queue_limit queue_limit_changed; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER queue_limit_changed AFTER INSERT OR DELETE OR UPDATE OF queue, global_concurrency, key_concurrency, rate_limit, rate_window, key_fifo, key_fifo_skip_dead ON pgbus.queue_limit FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

--
-- Name: queue_limit queue_limit_truncated; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER queue_limit_truncated AFTER TRUNCATE ON pgbus.queue_limit FOR EACH STATEMENT EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

--
-- Name: queue_max_wait queue_max_wait_listed; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER queue_max_wait_listed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON pgbus.queue_max_wait FOR EACH STATEMENT EXECUTE FUNCTION pgbus.queue_max_wait_listed();

--
-- Name: queue_pause queue_pause_changed; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER queue_pause_changed AFTER INSERT OR DELETE OR UPDATE ON pgbus.queue_pause FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

--
-- Name: queue_pause queue_pause_truncated; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER queue_pause_truncated AFTER TRUNCATE ON pgbus.queue_pause FOR EACH STATEMENT EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

--
-- Name: schedule schedule_added; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER schedule_added AFTER INSERT ON pgbus.schedule FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-schedule');

--
-- Name: schedule schedule_sooner; Type: TRIGGER; Schema: pgbus; Owner: -
--

CREATE TRIGGER schedule_sooner AFTER UPDATE OF next_run_at, paused ON pgbus.schedule FOR EACH ROW WHEN (((new.next_run_at < old.next_run_at) OR (old.paused AND (NOT new.paused)))) EXECUTE FUNCTION pgbus.tell_engines('pgbus-schedule');

--
-- Name: workflow_job workflow_job_workflow_id_fkey; Type: FK CONSTRAINT; Schema: pgbus; Owner: -
--

ALTER TABLE ONLY pgbus.workflow_job
    ADD CONSTRAINT workflow_job_workflow_id_fkey FOREIGN KEY (workflow_id) REFERENCES pgbus.workflow(id) ON DELETE CASCADE;

--
-- Name: FUNCTION wake(queues text[], dues timestamp with time zone[]); Type: ACL; Schema: pgbus; Owner: -
--

REVOKE ALL ON FUNCTION pgbus.wake(queues text[], dues timestamp with time zone[]) FROM PUBLIC;

--
-- Name: FUNCTION wake_coalesced(queue pgbus.queue_name, due timestamp with time zone); Type: ACL; Schema: pgbus; Owner: -
--

REVOKE ALL ON FUNCTION pgbus.wake_coalesced(queue pgbus.queue_name, due timestamp with time zone) FROM PUBLIC;

--
-- Name: TABLE queue_max_wait; Type: ACL; Schema: pgbus; Owner: -
--

GRANT SELECT ON TABLE pgbus.queue_max_wait TO PUBLIC;

--
-- Name: TABLE schema_compat; Type: ACL; Schema: pgbus; Owner: -
--

GRANT SELECT ON TABLE pgbus.schema_compat TO PUBLIC;

--
-- Name: TABLE setting; Type: ACL; Schema: pgbus; Owner: -
--

GRANT SELECT ON TABLE pgbus.setting TO PUBLIC;

-- Repeatable migration: the current definition of the checks every enqueue makes before it writes
-- anything: pgbus.check_run_at, pgbus.check_payload, pgbus.check_trace; and, at the end, the rules
-- of two domains of pgbus.job (V21). Flyway applies it after
-- the versioned migrations and again whenever this file changes. See docs/schema.md.
--
-- Each refuses with SQLSTATE 22023 (invalid_parameter_value) and a message that names the value,
-- the queue and the fix. On the enqueue path, so path-independent rather than pinned (see
-- R__enqueue.sql).

-- run_at may be at most 100 years (interval '36500 days') after now(), and must be finite. Beyond
-- that, epoch milliseconds overflow in the engine's alarms, and 'infinity' used to fail with
-- "cannot convert infinity to bigint" deep inside pgbus.notify. Java bounds delays with the same
-- constant (EnqueueOptions.MAX_SCHEDULE_AHEAD). Existing rows are left as they are: no CHECK on
-- the table, whose bound would move with now() anyway.
CREATE OR REPLACE FUNCTION pgbus.check_run_at(queue text, run_at timestamptz) RETURNS void
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

-- Refuses a payload over pgbus.setting.max_payload_bytes, counted in bytes of its JSON text,
-- octet_length(payload::text): the measure of the claim, which buries a stored payload over the
-- limit (R__claim.sql), so an enqueue refuses exactly what a claim would bury. With the message of
-- the Java API. The common case never renders the text: an uncompressed jsonb value's JSON text is
-- at most 6 times its binary size (a control character, 1 byte, is written \u0001), so a payload
-- of a sixth of the limit or less cannot be over it. A compressed value (one read from a table:
-- pg_column_size is then its compressed size, 10 MB of one letter fit in 120 kB) is always
-- measured (issue #23). Every caller's filter in front of this function is the same test.
CREATE OR REPLACE FUNCTION pgbus.check_payload(queue text, payload jsonb) RETURNS void
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

-- The W3C trace context of the enqueuer: traceparent version 00 (00-<32 hex trace id>-<16 hex
-- parent id>-<2 hex flags>, 55 characters, lower case, ids not all zero) and a tracestate of at
-- most 512 printable ASCII characters (the length propagators must keep, W3C Trace Context
-- 3.3.1.5). The values are untrusted input, so an invalid one is refused, not dropped: the caller
-- passed it on purpose. The table's CHECKs hold the same rules against a plain INSERT. Called
-- only when a trace context is passed, so an enqueue without one pays nothing.
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

-- The rules of the domains pgbus.job_progress (V11's shape, at most 1 KB of JSON text) and
-- pgbus.job_result (at most 64 KiB of JSON text), as their CHECKs call them since V21: a call of a
-- strict function is one node for an INSERT to set up, where the rule inline was the largest
-- expression of pgbus.job, set up for every enqueue statement although enqueue never writes
-- either column (docs/performance.md, "Enqueue at the raw ceiling"). Strict: NULL (no report, no
-- result) passes without a call. Pinned: they run in whatever session writes the column, and only
-- then. Keep them equal to what the Java side accepts (JobProgress, Outcome.complete).
CREATE OR REPLACE FUNCTION pgbus.job_progress_valid(progress jsonb) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
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

CREATE OR REPLACE FUNCTION pgbus.job_result_valid(result jsonb) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    RETURN octet_length(result::text) <= 65536;
  END $$;

-- The rules of pgbus.schedule's zone and cron expression (V23), as its CHECKs call them: a zone
-- PostgreSQL knows (tried with timezone(zone, now()); STABLE, not IMMUTABLE: the answer depends on
-- the server's time zone data and timezone_abbreviations), and an expression of cron's shape (5 or
-- 6 fields of cron's characters, or an @nickname). Each refuses with check_violation and a message
-- that names the value and the fix. Necessary, not sufficient: the engine still parses both in
-- Java (java.time, cron-utils), and skips and reports a row that fails there. Pinned: they run in
-- whatever session writes the table.
CREATE OR REPLACE FUNCTION pgbus.schedule_zone_valid(zone text) RETURNS boolean
  LANGUAGE plpgsql STABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    PERFORM pg_catalog.timezone(schedule_zone_valid.zone, pg_catalog.now());
    RETURN true;
  EXCEPTION WHEN invalid_parameter_value THEN
    RAISE EXCEPTION 'pgbus: unknown time zone % for a schedule: use an IANA zone such as Europe/Berlin, or UTC',
      pg_catalog.quote_literal(pg_catalog.left(schedule_zone_valid.zone, 80))
      USING ERRCODE = 'check_violation';
  END $$;

CREATE OR REPLACE FUNCTION pgbus.schedule_cron_valid(cron text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF schedule_cron_valid.cron ~ '^\s*(@[A-Za-z]+|[0-9A-Za-z*/,?#-]+(\s+[0-9A-Za-z*/,?#-]+){4,5})\s*$' THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: invalid cron expression % for a schedule: use 5 fields (minute hour day-of-month month day-of-week, e.g. ''0 3 * * *''), 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly',
      pg_catalog.quote_literal(pg_catalog.left(schedule_cron_valid.cron, 80))
      USING ERRCODE = 'check_violation';
  END $$;

-- The rule of pgbus.schedule.overlap (V42), as its CHECK calls it: one of the four policies, else
-- check_violation naming the value and the allowed ones (the Java API refuses the same values).
CREATE OR REPLACE FUNCTION pgbus.schedule_overlap_valid(overlap text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF schedule_overlap_valid.overlap IN ('allow', 'skip', 'queue', 'cancel_previous') THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: unknown overlap policy % for a schedule: use allow, skip, queue or cancel_previous',
      pg_catalog.quote_literal(pg_catalog.left(schedule_overlap_valid.overlap, 80))
      USING ERRCODE = 'check_violation';
  END $$;

-- Whether pgbus.node.capsules has the shape an engine writes (NodeStore.capsulesJson): an array of
-- objects, each with a string name, an array of string queues and a whole-number concurrency. The
-- fleet read (NodeStore.nodes) expands only such a value, so that one row written by SQL in
-- another shape does not fail the read of every node (issue #23). No CHECK on the table: the tick
-- updates each node's row on every heartbeat, and an old malformed row must not fail its JVM's
-- heartbeat; the next start of that JVM rewrites its capsules anyway.
CREATE OR REPLACE FUNCTION pgbus.node_capsules_valid(capsules jsonb) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
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
  END $$;

-- An encrypting queue's payload must be sealed (issue #30, V53): the queues of
-- pgbus.setting.encrypted_queues hold only payloads that the Java API sealed with the deployment's
-- key (JobCipher), the jsonb {"pgbus.enc": "pgbus.enc.v1:<key id>:<iv>:<ciphertext>"}, which is what this reads from the
-- payload's JSON text (one key, so jsonb writes it exactly so). SQL has no key and cannot seal: a
-- plain payload for such a queue is refused here, at the enqueue, rather than stored in plaintext
-- for its handler to refuse at run time. ordinal names the payload within a batch (NULL: one
-- job). Only called for a queue the caller found in encrypted_queues, so it reads nothing and
-- a queue that does not encrypt never pays for it; pinned (not on the plain enqueue path).
CREATE OR REPLACE FUNCTION pgbus.check_sealed(queue text, payload jsonb, ordinal integer DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF check_sealed.payload IS NULL
       OR check_sealed.payload::text !~ '^\{"pgbus\.enc": "pgbus\.enc\.v1:[A-Za-z0-9._-]{1,32}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+"\}$' THEN
      RAISE EXCEPTION 'pgbus: queue % encrypts its payloads, and the payload% is plaintext: SQL has no key and cannot encrypt; enqueue through the Java API (JobQueue, or `pgbus enqueue` with the keys), which seals it, or stop encrypting the queue (encrypt=false on the deployment that serves it)',
        check_sealed.queue, coalesce(' ' || check_sealed.ordinal || ' of the batch', '')
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'the deployment sets a queue''s encryption at start (pgbus.queue_encrypt_set)';
    END IF;
  END $$;

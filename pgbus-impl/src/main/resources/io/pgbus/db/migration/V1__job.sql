-- pgbus schema, version 1: the job table, its indexes, and the public SQL API
-- (pgbus.enqueue, pgbus.enqueue_many, pgbus.claim). See docs/schema.md.

CREATE TYPE pgbus.job_state AS ENUM (
  'scheduled',  -- waiting for run_at (delayed, or snoozed)
  'available',  -- may run now
  'running',    -- claimed; lease_expires_at says until when
  'retryable',  -- failed an attempt; runs again at run_at
  'completed',
  'dead',       -- failed its last attempt; errors keeps why; a replay revives it
  'cancelled'
);

-- Queue names are identifiers because they become channel names (pgbus_<queue>).
CREATE DOMAIN pgbus.queue_name AS text
  CHECK (VALUE ~ '^[a-z][a-z0-9_]*$' AND length(VALUE) <= 48);

-- Turns a text into a queue name, or fails with a message that names the value and the rule.
CREATE FUNCTION pgbus.queue(name text) RETURNS pgbus.queue_name
  LANGUAGE plpgsql IMMUTABLE
  AS $$
  BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]*$' OR length(name) > 48 THEN
      RAISE EXCEPTION 'pgbus: invalid queue name %: use a lower-case letter followed by lower-case letters, digits or _, at most 48 characters', quote_nullable(name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN name::pgbus.queue_name;
  END $$;

CREATE TABLE pgbus.job (
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  queue            pgbus.queue_name NOT NULL,
  state            pgbus.job_state NOT NULL DEFAULT 'available',
  priority         smallint NOT NULL DEFAULT 0 CHECK (priority BETWEEN -100 AND 100),
  payload          jsonb NOT NULL,
  attempt          integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 25 CHECK (max_attempts >= 1),  -- grows on replay
  run_at           timestamptz NOT NULL DEFAULT now(),
  attempted_at     timestamptz,
  attempted_by     text,
  lease_expires_at timestamptz,
  errors           jsonb NOT NULL DEFAULT '[]',  -- newest first, at most 10 entries
  created_at       timestamptz NOT NULL DEFAULT now(),
  finalized_at     timestamptz
);

-- The claim index. Partial, so it holds only jobs that can still run, and it stays small however
-- many finished jobs the table keeps. Its column order is the claim's ORDER BY inside one queue.
CREATE INDEX job_claim_idx ON pgbus.job (queue, priority, run_at, id)
  WHERE state IN ('available', 'scheduled', 'retryable');

-- The head of a queue: its earliest waiting job (the poller's one statement per tick), and when
-- the next delayed or retrying job becomes due.
CREATE INDEX job_due_idx ON pgbus.job (queue, run_at)
  WHERE state IN ('available', 'scheduled', 'retryable');

-- Lease rescue scans only running jobs.
CREATE INDEX job_lease_idx ON pgbus.job (lease_expires_at) WHERE state = 'running';

-- Retention scans only finished jobs, oldest first.
CREATE INDEX job_finalized_idx ON pgbus.job (state, finalized_at)
  WHERE state IN ('completed', 'dead', 'cancelled');

-- The channel a queue's wake-ups go to. The single place that maps names to channels.
CREATE FUNCTION pgbus.channel(queue pgbus.queue_name) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT 'pgbus_' || queue $$;

-- The wake-up hint for a queue. The payload is empty for a job that may run now, or the due time
-- in epoch milliseconds for a later one, so a sleeping worker can set its alarm without a query.
-- Rounded up (ceil): an alarm set to a floored time could ring up to 1 ms before run_at, and a
-- claim then would find nothing.
-- NOTIFY is transactional: it is delivered at commit and dropped on rollback, and identical
-- notifications in one transaction collapse into one.
CREATE FUNCTION pgbus.notify(queue pgbus.queue_name, due timestamptz) RETURNS void
  LANGUAGE sql VOLATILE
  AS $$
    SELECT pg_notify(pgbus.channel(queue),
                     CASE WHEN due <= now() THEN ''
                          ELSE (ceil(extract(epoch FROM due) * 1000))::bigint::text END)
  $$;

-- LISTENs on the given channels. LISTEN takes no bind parameter, so each channel is quoted with
-- format(%I) here rather than concatenated into SQL text by any client.
CREATE FUNCTION pgbus.listen(channels text[]) RETURNS void
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE c text;
  BEGIN
    FOREACH c IN ARRAY channels LOOP
      EXECUTE format('LISTEN %I', c);
    END LOOP;
  END $$;

-- Enqueues one job in the caller's transaction and returns its id. Usable from any SQL client:
--   SELECT pgbus.enqueue('emails', '{"to":"a@example.com"}');
--   SELECT pgbus.enqueue('emails', '{}', run_at => now() + interval '5 minutes', priority => -1);
CREATE FUNCTION pgbus.enqueue(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25)
  RETURNS bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_id bigint;
    v_run_at timestamptz := coalesce(enqueue.run_at, now());
  BEGIN
    -- A JSON null is refused like an SQL NULL, as the Java API refuses it.
    IF enqueue.payload IS NULL OR jsonb_typeof(enqueue.payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: payload must not be null (queue %); use ''{}'' for an empty payload', enqueue.queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, run_at)
    VALUES (pgbus.queue(enqueue.queue),
            CASE WHEN v_run_at <= now() THEN 'available' ELSE 'scheduled' END::pgbus.job_state,
            enqueue.priority, enqueue.payload, enqueue.max_attempts, v_run_at)
    RETURNING id INTO v_id;
    PERFORM pgbus.notify(enqueue.queue, v_run_at);
    RETURN v_id;
  END $$;

-- Enqueues many jobs in one statement (arrays of equal length, NULL run_at = now) and returns
-- their ids in input order. One notification per queue and due time, not one per job.
CREATE FUNCTION pgbus.enqueue_many(
    queues       text[],
    payloads     jsonb[],
    run_ats      timestamptz[],
    priorities   integer[],
    max_attempts integer[])
  RETURNS SETOF bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  BEGIN
    IF array_position(payloads, NULL) IS NOT NULL OR array_position(payloads, 'null') IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload',
        coalesce(array_position(payloads, NULL), array_position(payloads, 'null'))
        USING ERRCODE = 'null_value_not_allowed';
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

-- Claims up to max_jobs runnable jobs from queues, in strict queue order: every claimable job of
-- queues[1] is taken before any job of queues[2] is looked at, and so on. Inside a queue the order
-- is priority, then run_at, then id.
--
-- Why a loop and not one UNION ALL: a UNION's append order is planner behaviour, not a contract,
-- and a LATERAL join with a LIMIT per queue would lock rows of later queues that the outer LIMIT
-- then throws away. Here each queue is visited only while capacity remains, and each inner
-- SELECT ... LIMIT n FOR UPDATE SKIP LOCKED locks exactly the rows it returns (LockRows sits below
-- Limit), all of which the UPDATE then claims. A claim that finds nothing locks nothing.
--
-- Planner note: the inner scan walks job_claim_idx for one queue in (priority, run_at, id) order
-- and filters run_at <= now(); delayed jobs that are not yet due are skipped by that filter.
CREATE FUNCTION pgbus.claim(
    queues   text[],
    max_jobs integer,
    worker   text,
    lease    interval)
  RETURNS SETOF pgbus.job
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    q text;
    remaining integer := max_jobs;
    got integer;
  BEGIN
    FOREACH q IN ARRAY queues LOOP
      EXIT WHEN remaining <= 0;
      RETURN QUERY
        WITH claimed AS (
          UPDATE pgbus.job j
             SET state = 'running',
                 attempt = j.attempt + 1,
                 attempted_at = now(),
                 attempted_by = worker,
                 lease_expires_at = now() + lease
           WHERE j.id IN (
                   SELECT c.id FROM pgbus.job c
                    WHERE c.queue = q
                      AND c.state IN ('available', 'scheduled', 'retryable')
                      AND c.run_at <= now()
                    ORDER BY c.priority, c.run_at, c.id
                    LIMIT remaining
                    FOR UPDATE SKIP LOCKED)
          RETURNING j.*)
        SELECT * FROM claimed ORDER BY priority, run_at, id;
      GET DIAGNOSTICS got = ROW_COUNT;
      remaining := remaining - got;
    END LOOP;
  END $$;

-- pgbus schema, version 3: the job lifecycle features. See docs/schema.md.
--   * unique jobs: at most one waiting or running job per (queue, unique_key);
--   * pause: a paused queue keeps taking jobs, but no worker claims them until it is resumed;
--   * cron: the last run each periodic job has enqueued, the fence for exactly one job per run.
-- V1 and V2 are applied in deployed databases and are never edited: what changes here is
-- replaced (CREATE OR REPLACE) or dropped and created again with compatible defaults.

-- ---------------------------------------------------------------------------------------------
-- Unique jobs
-- ---------------------------------------------------------------------------------------------

-- NULL for ordinary jobs. No default, so adding the column rewrites nothing.
ALTER TABLE pgbus.job ADD COLUMN unique_key text
  CONSTRAINT job_unique_key_check CHECK (length(unique_key) BETWEEN 1 AND 255);

-- The uniqueness rule itself, enforced by the database so that it holds across JVMs and
-- concurrent transactions: among jobs that are waiting or running, one per (queue, unique_key).
-- A completed, dead or cancelled job leaves the index, and with it frees its key. Partial, so it
-- only ever holds keyed jobs that can still run. The predicate is repeated word for word as the
-- ON CONFLICT target in pgbus.enqueue_job, which is how PostgreSQL infers this index.
CREATE UNIQUE INDEX job_unique_idx ON pgbus.job (queue, unique_key)
  WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running', 'retryable');

-- Enqueues one job and says whether it was new. With a unique_key, a job with the same key that
-- is still waiting or running wins: nothing is inserted, no notification is sent, and its id
-- comes back with duplicate = true. No error is raised, so the caller's transaction goes on.
--
-- Why INSERT ... ON CONFLICT DO NOTHING and not a check first: a SELECT-then-INSERT lets two
-- transactions both see no job and both insert. With ON CONFLICT, the second waits on the
-- first's uncommitted row: if the first commits, the second does nothing and then reads the
-- committed id (READ COMMITTED: each statement here takes a fresh snapshot); if it rolls back,
-- the second inserts. The loop covers the holder finishing between those two statements.
CREATE FUNCTION pgbus.enqueue_job(
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
    IF enqueue_job.payload IS NULL OR jsonb_typeof(enqueue_job.payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: payload must not be null (queue %); use ''{}'' for an empty payload', enqueue_job.queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF enqueue_job.unique_key IS NOT NULL
       AND (btrim(enqueue_job.unique_key) = '' OR length(enqueue_job.unique_key) > 255) THEN
      RAISE EXCEPTION 'pgbus: invalid unique key % (queue %): use 1 to 255 characters, not only blanks, or NULL for no key',
        quote_literal(left(enqueue_job.unique_key, 80)), enqueue_job.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOOP
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at, unique_key)
      VALUES (v_queue, v_state, enqueue_job.priority, enqueue_job.payload,
              enqueue_job.max_attempts, v_run_at, enqueue_job.unique_key)
      ON CONFLICT (queue, unique_key)
        WHERE unique_key IS NOT NULL AND state IN ('scheduled', 'available', 'running', 'retryable')
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
       WHERE j.queue = v_queue AND j.unique_key = enqueue_job.unique_key
         AND j.state IN ('scheduled', 'available', 'running', 'retryable');
      IF FOUND THEN
        duplicate := true;
        RETURN;
      END IF;
    END LOOP;
  END $$;

-- pgbus.enqueue gains unique_key as a last parameter with a default, so every existing call
-- (positional or named) means what it meant. The V1 signature has to go first: with both, a call
-- with fewer arguments would be ambiguous.
DROP FUNCTION pgbus.enqueue(text, jsonb, timestamptz, integer, integer);

-- Enqueues one job in the caller's transaction and returns its id; with a unique_key that a
-- waiting or running job of the queue already has, returns that job's id and inserts nothing.
--   SELECT pgbus.enqueue('emails', '{"to":"a@example.com"}');
--   SELECT pgbus.enqueue('reports', '{"order":42}', unique_key => 'order-42');
CREATE FUNCTION pgbus.enqueue(
    queue        text,
    payload      jsonb,
    run_at       timestamptz DEFAULT NULL,
    priority     integer     DEFAULT 0,
    max_attempts integer     DEFAULT 25,
    unique_key   text        DEFAULT NULL)
  RETURNS bigint
  LANGUAGE sql VOLATILE
  AS $$
    SELECT e.id
      FROM pgbus.enqueue_job(enqueue.queue, enqueue.payload, enqueue.run_at, enqueue.priority,
                             enqueue.max_attempts, enqueue.unique_key) e
  $$;

DROP FUNCTION pgbus.enqueue_many(text[], jsonb[], timestamptz[], integer[], integer[]);

-- Enqueues many jobs (arrays of equal length, NULL run_at = now) and returns their ids in input
-- order. Without unique keys: one INSERT and one notification per queue and due time, as in V1.
-- With unique keys: one pgbus.enqueue_job per element, in input order, so a key repeated inside
-- the batch or already waiting yields the existing id; ids may then repeat.
CREATE FUNCTION pgbus.enqueue_many(
    queues       text[],
    payloads     jsonb[],
    run_ats      timestamptz[],
    priorities   integer[],
    max_attempts integer[],
    unique_keys  text[] DEFAULT NULL)
  RETURNS SETOF bigint
  LANGUAGE plpgsql VOLATILE
  AS $$
  BEGIN
    IF array_position(payloads, NULL) IS NOT NULL OR array_position(payloads, 'null') IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload',
        coalesce(array_position(payloads, NULL), array_position(payloads, 'null'))
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF unique_keys IS NOT NULL AND EXISTS (SELECT 1 FROM unnest(unique_keys) k WHERE k IS NOT NULL) THEN
      FOR i IN 1 .. coalesce(array_length(queues, 1), 0) LOOP
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
-- Pause and resume
-- ---------------------------------------------------------------------------------------------

-- A row per paused queue. In the database, so a pause reaches every JVM at its next claim.
-- Any valid queue name may be paused, also one that has no jobs yet.
CREATE TABLE pgbus.queue_pause (
  queue     pgbus.queue_name PRIMARY KEY,
  paused_at timestamptz NOT NULL DEFAULT now(),
  paused_by text                                 -- the worker id (host:pid) or SQL user
);

-- The wake-up hint, as in V1, but silent for a paused queue: no worker could claim its jobs, so
-- waking one would only cost an empty claim per enqueue. pgbus.resume sends the wake instead.
CREATE OR REPLACE FUNCTION pgbus.notify(queue pgbus.queue_name, due timestamptz) RETURNS void
  LANGUAGE sql VOLATILE
  AS $$
    SELECT pg_notify(pgbus.channel(queue),
                     CASE WHEN due <= now() THEN ''
                          ELSE (ceil(extract(epoch FROM due) * 1000))::bigint::text END)
     WHERE NOT EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = notify.queue)
  $$;

-- Pauses a queue: returns true when it was running and is paused now, false when it was paused
-- already. Jobs may still be enqueued (they wait); jobs already claimed run to their end.
--   SELECT pgbus.pause('reports');
CREATE FUNCTION pgbus.pause(queue text, paused_by text DEFAULT NULL) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  AS $$
  BEGIN
    INSERT INTO pgbus.queue_pause (queue, paused_by)
    VALUES (pgbus.queue(pause.queue), coalesce(pause.paused_by, current_user))
    ON CONFLICT DO NOTHING;
    RETURN FOUND;
  END $$;

-- Resumes a paused queue: returns true when it was paused. On commit, the queue's channel gets
-- the wake-up of its earliest waiting job, so every JVM's workers claim the jobs that waited at
-- once (or set an alarm for a later one), rather than at their next slow poll.
--   SELECT pgbus.resume('reports');
CREATE FUNCTION pgbus.resume(queue text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(resume.queue);
    v_due   timestamptz;
  BEGIN
    DELETE FROM pgbus.queue_pause p WHERE p.queue = v_queue;
    IF NOT FOUND THEN
      RETURN false;
    END IF;
    SELECT min(j.run_at) INTO v_due
      FROM pgbus.job j
     WHERE j.queue = v_queue AND j.state IN ('available', 'scheduled', 'retryable');
    IF v_due IS NOT NULL THEN
      PERFORM pgbus.notify(v_queue, v_due);
    END IF;
    RETURN true;
  END $$;

-- The claim of V1, with one change: a paused queue is skipped, as if it had no claimable job, and
-- the next queue in the list is visited. Everything else, and the reasoning, is as in V1:
--
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
-- The pause check is a primary-key probe on a tiny table, once per visited queue. A pause does
-- not interrupt a claim that is already running: a statement that started before the pause
-- committed may still take jobs. From the next claim on, none.
--
-- Planner note: the inner scan walks job_claim_idx for one queue in (priority, run_at, id) order
-- and filters run_at <= now(); delayed jobs that are not yet due are skipped by that filter.
CREATE OR REPLACE FUNCTION pgbus.claim(
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
      CONTINUE WHEN EXISTS (SELECT 1 FROM pgbus.queue_pause p WHERE p.queue = q);
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

-- ---------------------------------------------------------------------------------------------
-- Cron
-- ---------------------------------------------------------------------------------------------

-- One row per cron name (pgbus.cron.<name>.* in the configuration). The maintenance leader
-- enqueues a run only in the transaction that moves last_run_at from the value it read to that
-- run's instant (UPDATE ... WHERE last_run_at = <read>), so a run is enqueued exactly once across
-- all JVMs, also while two leaders overlap for a moment or after a leader change. A row whose cron
-- was removed from the configuration is left alone; delete it by hand if you like.
CREATE TABLE pgbus.cron (
  name        text PRIMARY KEY,
  last_run_at timestamptz NOT NULL,  -- the latest run enqueued, or when the cron was first seen
  updated_at  timestamptz NOT NULL DEFAULT now()
);

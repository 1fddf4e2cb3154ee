-- Repeatable migration: the start-by deadline of a job (V43, issue #31 item 3). See docs/schema.md,
-- "V43: start-by deadline". Off the enqueue's hot path (only jobs with a deadline call these), so
-- both pin their search_path.

-- Gives a job that has not started yet its deadline, with the checks of the Java API
-- (EnqueueOptions.startBy, Jobs): a deadline that is null, not finite, not after now, or not after
-- the job's run_at (it could never start) is refused with the value and the fix. A job that waits
-- on dependencies or is in a batch is due when they are done, so only now() bounds its deadline.
-- False when the job is not waiting to start (gone, running, or finished).
CREATE OR REPLACE FUNCTION pgbus.set_start_by(job_id bigint, start_by timestamptz)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- pgbus.enqueue with a start-by deadline: a job not claimed by start_by never runs (it ends
-- cancelled, 'expired: not started by ...'). A function of its own, not an overload of
-- pgbus.enqueue: an overload with start_by third would make every positional call that passes a
-- run_at third ambiguous, and one with start_by last would need defaults that make the existing
-- calls ambiguous. A duplicate (its unique key held by a waiting or running job) returns that
-- job's id and leaves its deadline as it is.
--   SELECT pgbus.enqueue_start_by('reports', '{}', now() + interval '10 minutes');
CREATE OR REPLACE FUNCTION pgbus.enqueue_start_by(
    queue text, payload jsonb, start_by timestamptz, run_at timestamptz DEFAULT NULL,
    priority integer DEFAULT 0, max_attempts integer DEFAULT 25, unique_key text DEFAULT NULL,
    trace_parent text DEFAULT NULL, trace_state text DEFAULT NULL,
    concurrency_key text DEFAULT NULL)
  RETURNS bigint
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Sets a queue's max-wait (V56): every enqueue function gives a job of the queue without a deadline
-- of its own start_by = when it is due + max_wait. NULL removes it. Bounds as
-- pgbus.queue.<name>.max-wait: 1 millisecond to 36500 days, else refused with the value and the
-- fix. Engines call it at start for the queues they configure or read (QueueMaxWait: the newest
-- build wins); an operator may from psql. True when the row changed.
--   SELECT pgbus.queue_max_wait_set('reports', interval '10 minutes');
CREATE OR REPLACE FUNCTION pgbus.queue_max_wait_set(
    queue text, max_wait interval, updated_by text DEFAULT NULL)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Keeps pgbus.setting.max_wait_queues (V57) the sorted list of the queues that have a
-- pgbus.queue_max_wait row, after every statement that writes the table (a statement trigger:
-- whoever writes it, pgbus.queue_max_wait_set or plain SQL, once per statement). The enqueue
-- functions probe pgbus.queue_max_wait only for a listed queue (docs/schema.md, "V57").
--
-- The list is read from the table, not patched by the change: a statement that changes nothing
-- the list shows (a window changed, the build stamped) reads it and writes nothing, taking no
-- lock. One that does locks the setting row first, then reads the table with a snapshot taken
-- after that lock (READ COMMITTED: each statement its own), so two writers of different queues
-- take turns and the second lists the first's queue too. SECURITY DEFINER: a role that may write
-- pgbus.queue_max_wait (an engine's, through pgbus.queue_max_wait_set) needs no grant on
-- pgbus.setting.
CREATE OR REPLACE FUNCTION pgbus.queue_max_wait_listed() RETURNS trigger
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pgbus, pg_temp
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

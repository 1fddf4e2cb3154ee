-- pgbus schema V4: enqueue without a unique key takes a plain INSERT again.
--
-- V3 sent every enqueue through INSERT ... ON CONFLICT DO NOTHING, keyed or not. Speculative
-- insertion is not free even when no arbiter index can match a row (a NULL unique_key never
-- does): the bench's single-job enqueue fell from 0.93x to 0.53x of a raw INSERT + pg_notify,
-- with the server's time per enqueue up from 0.11 ms to 0.20 ms. Keyed enqueues keep V3's loop.
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
    IF enqueue_job.unique_key IS NULL THEN
      INSERT INTO pgbus.job AS j (queue, state, priority, payload, max_attempts, run_at)
      VALUES (v_queue, v_state, enqueue_job.priority, enqueue_job.payload,
              enqueue_job.max_attempts, v_run_at)
      RETURNING j.id INTO id;
      duplicate := false;
      PERFORM pgbus.notify(v_queue, v_run_at);
      RETURN;
    END IF;
    IF btrim(enqueue_job.unique_key) = '' OR length(enqueue_job.unique_key) > 255 THEN
      RAISE EXCEPTION 'pgbus: invalid unique key % (queue %): use 1 to 255 characters, not only blanks, or NULL for no key',
        quote_literal(left(enqueue_job.unique_key, 80)), enqueue_job.queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- See V3: the insert waits for an uncommitted holder of the key; the loop covers the holder
    -- finishing between the insert that found a conflict and the read of its id.
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

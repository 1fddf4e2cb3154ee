-- Repeatable migration: unique keys with a period, chosen states, replace and debounce (V49, issue
-- #31 items 2 and 4). See docs/schema.md, "V49: unique claims". A plain enqueue never calls these,
-- so none is on the hot path and each pins its search_path.

-- The rule of an enqueue_unique call, with the bounds of EnqueueOptions (forPeriod, amongStates,
-- replacing, debounce): each bad value is refused with the value and the fix, before anything is
-- written.
CREATE OR REPLACE FUNCTION pgbus.check_unique_rule(
    queue text, unique_key text, period interval, states text[], replace text[],
    debounce interval, max_wait interval, run_at timestamptz)
  RETURNS void
  LANGUAGE plpgsql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Enqueues a job with a unique key and a rule for what an enqueue that meets the key's holder does.
-- Returns the id of the job that will run, the outcome and that job's due time:
--   'inserted'      a new job (and, with a period, the key's claim for the period);
--   'duplicate'     the holder is kept as it is (no replace or debounce asked);
--   'replaced'      the holder was waiting (scheduled, available, retryable) and was changed in
--                   place: the fields in replace, and with debounce its run_at pushed to
--                   least(now() + debounce, its created_at + max_wait), never earlier than it was;
--   'not_replaced'  replace or debounce was asked but the holder is running (or, with a period,
--                   finished in one of the claim's states): it is never changed; nothing is
--                   inserted either; the caller decides (enqueue again once it is done). Also
--                   when the run_at asked for, or a debounce alone, would move a waiting holder to
--                   or past its start-by deadline (below).
-- The holder: with period, the job of the key's claim (pgbus.unique_claim) while the claim lasts
-- and that job is waiting, running, or finished in one of the claim's states (a job no longer found,
-- deleted on completion or pruned, counts as completed); else, and always, a waiting or running job
-- with the key (job_unique_idx). The claim's own period and states decide (those of the enqueue that
-- took it). Raises nothing for a holder, so the caller's transaction goes on.
--
-- Race-free without a read-then-write: the claim row is inserted (ON CONFLICT DO NOTHING waits on an
-- uncommitted one) or locked FOR UPDATE before the holder is read, and the holder's row is locked
-- before it is changed, so a worker's claim (SKIP LOCKED) passes it by meanwhile, or got it first
-- and the row then reads running. The loop covers a holder that finished in between.
--   SELECT * FROM pgbus.enqueue_unique('reports', '{"order":42}', 'order-42', period => '1 hour');
--   SELECT * FROM pgbus.enqueue_unique('search', '{"doc":7}', 'doc-7', replace => '{payload}',
--                                      debounce => '5 seconds', max_wait => '1 minute');
CREATE OR REPLACE FUNCTION pgbus.enqueue_unique(
    queue text, payload jsonb, unique_key text,
    period interval DEFAULT NULL, states text[] DEFAULT NULL, replace text[] DEFAULT NULL,
    debounce interval DEFAULT NULL, max_wait interval DEFAULT NULL,
    run_at timestamptz DEFAULT NULL, priority integer DEFAULT 0, max_attempts integer DEFAULT 25,
    trace_parent text DEFAULT NULL, trace_state text DEFAULT NULL,
    concurrency_key text DEFAULT NULL,
    OUT id bigint, OUT outcome text, OUT due timestamptz)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Replaces fields of one waiting job by id (the admin API's replace and any SQL client): NULL
-- leaves a field as it is. Unlike an enqueue, a job that is not waiting is an error naming its
-- state and the fix: the caller asked for this job and no other. False when there is no such job.
-- Audited as 'replace'.
CREATE OR REPLACE FUNCTION pgbus.replace_job(
    job_id bigint, payload jsonb DEFAULT NULL, run_at timestamptz DEFAULT NULL,
    priority integer DEFAULT NULL)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

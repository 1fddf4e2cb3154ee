-- Repeatable migration: the current definition of pause and resume, and of pgbus.actor, who their
-- audit rows name. Flyway applies it after the versioned migrations and again whenever this file
-- changes. See docs/schema.md, "Pause and resume" and "V7: who did it". All three pin their path.

-- Who is acting: the principal the Java API set for this transaction, else the database role.
CREATE OR REPLACE FUNCTION pgbus.actor() RETURNS text
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$ SELECT coalesce(nullif(current_setting('pgbus.principal', true), ''), session_user::text) $$;

-- Pauses a queue: returns true when it was running and is paused now, false when it was paused
-- already. Jobs may still be enqueued (they wait); jobs already claimed run to their end. A pause
-- writes an audit row in the caller's transaction. paused_by is the worker id, or the SQL user.
--   SELECT pgbus.pause('reports');
CREATE OR REPLACE FUNCTION pgbus.pause(queue text, paused_by text DEFAULT NULL) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Resumes a paused queue: returns true when it was paused, and writes an audit row. On commit,
-- the queue's channel gets the wake-up of its earliest waiting job, so every JVM's workers claim
-- the jobs that waited at once (or set an alarm for a later one), rather than at their next slow
-- poll.
--   SELECT pgbus.resume('reports');
CREATE OR REPLACE FUNCTION pgbus.resume(queue text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

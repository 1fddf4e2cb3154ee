-- pgbus schema V24 (issue #23, "Hardening, second round"): triggers only, no table or column.
--
-- * Change triggers: a row written to pgbus.queue_limit or pgbus.queue_pause (a limit, a rate, a
--   FIFO setting, a pause, a resume) sends 'pgbus-queues' at commit, and a schedule made, moved
--   earlier or resumed in pgbus.schedule sends 'pgbus-schedule', whoever wrote it: the SQL
--   functions, the Java API, the console or a plain UPDATE. Engines LISTEN to both and re-read at
--   once (rate-limited): before, an engine read which queues are limited only at its start, so a
--   limit made later (by pgbus.queue_limit_set, or by the first enqueue with a concurrency key)
--   held keyed jobs to one start per poll ceiling until a restart. Row-level, so that the keyed
--   enqueue's INSERT ... ON CONFLICT DO NOTHING notifies only when it inserts the row; the claim's
--   own writes to queue_limit (the rate count) name no column the trigger watches, and the
--   leader's advance of a schedule moves next_run_at later, which the WHEN leaves out.
-- * pgbus.job_dependency gets a deferred constraint trigger: pgbus.enqueue_after no longer locks
--   its dependencies' rows for the rest of the caller's transaction (a running dependency could
--   not complete until that transaction ended); the trigger locks them at commit and settles an
--   edge whose dependency finished meanwhile.
--
-- The functions are created here because the triggers need them before the repeatable migrations
-- run; their current definitions are in R__notify.sql and R__links.sql. The previous release
-- runs unchanged on this schema: it LISTENs to neither channel (its engines keep reading limits at
-- start), and its enqueue_after, which still locks, works with the deferred trigger.

CREATE FUNCTION pgbus.tell_engines() RETURNS trigger
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    PERFORM pg_catalog.pg_notify(TG_ARGV[0], '');
    RETURN NULL;
  END $$;

CREATE TRIGGER queue_limit_changed
  AFTER INSERT OR DELETE
     OR UPDATE OF queue, global_concurrency, key_concurrency, rate_limit, rate_window, key_fifo,
                  key_fifo_skip_dead
  ON pgbus.queue_limit
  FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

CREATE TRIGGER queue_limit_truncated
  AFTER TRUNCATE ON pgbus.queue_limit
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

CREATE TRIGGER queue_pause_changed
  AFTER INSERT OR DELETE OR UPDATE ON pgbus.queue_pause
  FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

CREATE TRIGGER queue_pause_truncated
  AFTER TRUNCATE ON pgbus.queue_pause
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.tell_engines('pgbus-queues');

-- Only what can make the leader's next schedule read due sooner: a new schedule, a next run
-- moved earlier, a resume. A later next run or a pause is found at the read already planned.
CREATE TRIGGER schedule_added
  AFTER INSERT ON pgbus.schedule
  FOR EACH ROW EXECUTE FUNCTION pgbus.tell_engines('pgbus-schedule');

CREATE TRIGGER schedule_sooner
  AFTER UPDATE OF next_run_at, paused ON pgbus.schedule
  FOR EACH ROW
  WHEN (NEW.next_run_at OPERATOR(pg_catalog.<) OLD.next_run_at OR (OLD.paused AND NOT NEW.paused))
  EXECUTE FUNCTION pgbus.tell_engines('pgbus-schedule');

CREATE FUNCTION pgbus.dependency_linked() RETURNS trigger
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_state  text;
    v_result jsonb;
    v_linked boolean;
    v_edge   record;
    v_woken  bigint;
  BEGIN
    SELECT j.state::text, j.result, j.linked INTO v_state, v_result, v_linked
      FROM pgbus.job j
     WHERE j.id = NEW.depends_on
       FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      v_state := 'completed';
      v_result := NULL;
    ELSIF NOT v_linked THEN
      UPDATE pgbus.job j SET linked = true WHERE j.id = NEW.depends_on;
    END IF;
    IF v_state NOT IN ('completed', 'dead', 'cancelled') THEN
      RETURN NULL;  -- its finisher sees linked and this edge
    END IF;
    SELECT d.state, d.on_failure INTO v_edge
      FROM pgbus.job_dependency d
     WHERE d.depends_on = NEW.depends_on AND d.job_id = NEW.job_id;
    IF NOT FOUND THEN
      RETURN NULL;  -- the dependent was cancelled or completed in this transaction
    END IF;
    IF v_state = 'completed' THEN
      -- A 'failed' edge too: a dead dependency replayed and completed since the read.
      IF v_edge.state <> 'completed' THEN
        UPDATE pgbus.job_dependency d SET state = 'completed', result = v_result
         WHERE d.depends_on = NEW.depends_on AND d.job_id = NEW.job_id;
      END IF;
      WITH released AS (
        UPDATE pgbus.job j
           SET state = 'available', run_at = now()
         WHERE j.id = NEW.job_id
           AND j.state = 'scheduled'
           AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency o
                            WHERE o.job_id = j.id AND o.state <> 'completed')
        RETURNING j.queue)
      SELECT count(*) INTO v_woken
        FROM (SELECT pgbus.notify(r.queue, now()) FROM released r) n;
    ELSIF v_edge.state = 'waiting' THEN
      UPDATE pgbus.job_dependency d SET state = 'failed'
       WHERE d.depends_on = NEW.depends_on AND d.job_id = NEW.job_id;
      IF v_edge.on_failure = 'cancel' THEN
        UPDATE pgbus.job j SET state = 'cancelled', finalized_at = now()
         WHERE j.id = NEW.job_id AND j.state IN ('scheduled', 'available', 'retryable');
        IF FOUND THEN
          PERFORM pgbus.job_finished(ARRAY[NEW.job_id]);
        END IF;
      END IF;
    END IF;
    RETURN NULL;
  END $$;

CREATE CONSTRAINT TRIGGER job_dependency_linked
  AFTER INSERT ON pgbus.job_dependency
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION pgbus.dependency_linked();

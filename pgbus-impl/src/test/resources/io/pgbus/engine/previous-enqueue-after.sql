-- pgbus.enqueue_after as the release before V24 defined it (R__links.sql at 38a975b), verbatim:
-- it locks its dependencies (UPDATE ... linked = true) until its transaction ends. DependencyTest
-- installs it on a database of its own to show that it still works on the V24 schema, whose
-- deferred trigger on pgbus.job_dependency then finds the lock already held.
CREATE OR REPLACE FUNCTION pgbus.enqueue_after(
    queue        text,
    payload      jsonb,
    depends_on   bigint[],
    on_failures  text[]  DEFAULT NULL,
    priority     integer DEFAULT 0,
    max_attempts integer DEFAULT 25,
    unique_key   text    DEFAULT NULL,
    trace_parent text    DEFAULT NULL,
    trace_state  text    DEFAULT NULL,
    OUT id        bigint,
    OUT duplicate boolean)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_deps bigint[];
    v_policy text[] := coalesce(enqueue_after.on_failures,
                                array_fill('cancel'::text, ARRAY[cardinality(enqueue_after.depends_on)]));
    v_missing bigint[];
    v_waiting integer;
    v_failed integer;
  BEGIN
    PERFORM pgbus.check_dependencies(enqueue_after.queue, enqueue_after.depends_on, v_policy);
    v_deps := ARRAY(SELECT DISTINCT d FROM unnest(enqueue_after.depends_on) d ORDER BY d);
    v_missing := ARRAY(SELECT d FROM unnest(v_deps) d
                        WHERE NOT EXISTS (SELECT 1 FROM pgbus.job j WHERE j.id = d));
    IF cardinality(v_missing) > 0 THEN
      RAISE EXCEPTION 'pgbus: unknown job id(s) % in the dependencies of a job for queue %: depend only on jobs that exist (a job deleted on completion or pruned is gone)',
        v_missing, enqueue_after.queue
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    -- Lock and mark the dependencies, in id order.
    WITH marked AS (
      UPDATE pgbus.job j SET linked = true
       WHERE j.id = ANY (v_deps)
      RETURNING j.id, j.state)
    SELECT count(*) FILTER (WHERE m.state NOT IN ('completed', 'dead', 'cancelled')),
           count(*) FILTER (WHERE m.state IN ('dead', 'cancelled'))
      INTO v_waiting, v_failed
      FROM marked m;
    SELECT e.id, e.duplicate INTO enqueue_after.id, enqueue_after.duplicate
      FROM pgbus.enqueue_job(enqueue_after.queue, enqueue_after.payload,
                             CASE WHEN v_waiting + v_failed > 0 THEN now() + interval '36500 days' END,
                             enqueue_after.priority, enqueue_after.max_attempts,
                             enqueue_after.unique_key, enqueue_after.trace_parent,
                             enqueue_after.trace_state) e;
    IF enqueue_after.duplicate THEN
      RETURN;
    END IF;
    UPDATE pgbus.job j SET linked = true WHERE j.id = enqueue_after.id;
    -- A dependency given twice keeps its first policy.
    INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state, result)
    SELECT DISTINCT ON (j.id) j.id, enqueue_after.id, p.on_failure,
           CASE WHEN j.state = 'completed' THEN 'completed'
                WHEN j.state IN ('dead', 'cancelled') THEN 'failed'
                ELSE 'waiting' END,
           CASE WHEN j.state = 'completed' THEN j.result END
      FROM unnest(enqueue_after.depends_on, v_policy) WITH ORDINALITY AS p(id, on_failure, ord)
      JOIN pgbus.job j ON j.id = p.id
     ORDER BY j.id, p.ord;
    IF EXISTS (SELECT 1 FROM pgbus.job_dependency d
                WHERE d.job_id = enqueue_after.id AND d.state = 'failed' AND d.on_failure = 'cancel') THEN
      UPDATE pgbus.job j SET state = 'cancelled', finalized_at = now() WHERE j.id = enqueue_after.id;
      PERFORM pgbus.job_finished(ARRAY[enqueue_after.id]);
    END IF;
  END $$;

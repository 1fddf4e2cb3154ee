-- Repeatable migration: workflows (issue #31, item 5; tables in V52). See docs/batches.md,
-- "Workflows", and docs/schema.md, "V52: workflows".
--
-- A workflow is a DAG of jobs over the dependency edges of V16 (pgbus.job_dependency), each edge
-- with a kind: success (the child runs when the parent completes), failure (only when the parent
-- ends dead or cancelled) or result (when the parent completes and the edge's SQL/JSON path
-- predicate holds on its result). A child runs when every incoming edge is taken; an edge decided
-- against it (not_taken) cancels it at once, "branch not taken". pgbus.job_finished_as decides the
-- edges in the transaction that finishes the parent (pgbus.edge_decision), so every JVM and the
-- SQL path agree. Off the plain enqueue and completion paths, so every function pins its
-- search_path.

-- The state an undecided edge takes when its parent ends in parent_state: completed (taken),
-- not_taken, or failed (a success or result edge whose parent did not complete: the child is
-- cancelled or held by its on_failure, as any dependency, and revived by a workflow retry). A
-- predicate that does not answer true (false, unknown, a result that is not JSON or NULL, a
-- structural error) is not taken: silent evaluation, never an error in the finishing transaction.
CREATE OR REPLACE FUNCTION pgbus.edge_decision(kind text, predicate jsonpath, parent_state text,
                                               result jsonb)
  RETURNS text
  LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- A result edge's predicate, checked at enqueue: it must parse as a jsonpath and be a predicate
-- (a check expression answering one boolean, such as $.approved == true), not a path that selects
-- values ($.approved). Tried on an empty object: a predicate answers exactly one true, false or
-- unknown; a path answers none or a value. Raises naming the node, the parent and the text.
CREATE OR REPLACE FUNCTION pgbus.check_predicate(node text, parent text, predicate text)
  RETURNS jsonpath
  LANGUAGE plpgsql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
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
  END $$;

-- The bounds and the shape of a workflow, with the Java API's messages (Workflow): 1 to 1000
-- nodes, each named once (1 to 100 printable characters), at most 100 edges into a node, each from
-- a node of the workflow, one per parent, of a known kind and on_failure, and no cycle. nodes is a
-- jsonb array of objects (see pgbus.enqueue_workflow). Returns the node names in topological order
-- (parents before children).
CREATE OR REPLACE FUNCTION pgbus.check_workflow(name text, nodes jsonb)
  RETURNS text[]
  LANGUAGE plpgsql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Enqueues a workflow in the caller's transaction: a pgbus.workflow row, a job per node and an
-- edge per "after" entry. nodes is a jsonb array of
--   {"node": "charge", "queue": "payments", "payload": {...}, "priority": 0, "maxAttempts": 25,
--    "concurrencyKey": null,
--    "after": [{"node": "check", "kind": "success" | "failure" | "result",
--               "onFailure": "cancel" | "hold", "predicate": "$.approved == true"}]}
-- (kind, onFailure, priority, maxAttempts, concurrencyKey and after may be left out). Checked by
-- pgbus.check_workflow first: nothing is written when it raises. A node without edges is available
-- at once; the others wait (scheduled 100 years ahead, as enqueue_after's) until
-- pgbus.job_finished_as decides their edges. Every node is linked, so its end is reported. Returns
-- the workflow id and the job ids in the order of nodes.
--   SELECT * FROM pgbus.enqueue_workflow('order-42', '[{"node":"a","queue":"q","payload":{}}]');
CREATE OR REPLACE FUNCTION pgbus.enqueue_workflow(
    name         text,
    nodes        jsonb,
    trace_parent text DEFAULT NULL,
    trace_state  text DEFAULT NULL,
    OUT workflow_id bigint,
    OUT job_ids     bigint[])
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- The workflow a job belongs to (a node, or a job a member's handler enqueued), or NULL.
-- VOLATILE, not STABLE: the claim (JobStore.CLAIM) calls it for the linked jobs it took, and its
-- statement's snapshot is taken before pgbus.claim runs, whose UPDATE may take a job whose enqueue
-- committed after it (a handler's fan-out woke this claim at its commit): a STABLE function reads
-- with that older snapshot and misses the job's membership row; each statement of a VOLATILE one
-- takes a snapshot of its own.
CREATE OR REPLACE FUNCTION pgbus.workflow_of(job_id bigint)
  RETURNS bigint
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    -- PL/pgSQL, not SQL, here and below: a migration to a version before V52 (the tests' upgrade
    -- runs) creates these functions before their tables exist, and an SQL body is checked then.
    RETURN (SELECT w.workflow_id FROM pgbus.workflow_job w WHERE w.job_id = workflow_of.job_id);
  END $$;

-- Makes jobs members of a workflow without a node name: what a member's handler enqueues (fan-out,
-- the Java API does it for the handler), so they share its id and its cancel and retry. Linked, so
-- their own fan-out joins too. A job already a member stays in its workflow.
CREATE OR REPLACE FUNCTION pgbus.join_workflow(workflow_id bigint, job_ids bigint[])
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Cancels a whole workflow (JobQueue.cancelWorkflow): marks it cancelled, cancels every waiting
-- member at once (one statement, so no failure branch is released by a member cancelled before
-- another) and asks the JVMs running its running members to stop them (as pgbus.cancel of one job:
-- cancel_attempt, NOTIFY pgbus-cancel at commit). Their batches and dependents hear of it as of any
-- cancel. Audited once, 'workflow_cancel'. known is false for no such workflow.
CREATE OR REPLACE FUNCTION pgbus.cancel_workflow(workflow_id bigint, actor text DEFAULT NULL,
                                                 OUT known boolean, OUT cancelled integer,
                                                 OUT stopping integer)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

-- Retries a whole workflow (JobQueue.retryWorkflow):
-- * its dead members are replayed (as a replay of one job: a fresh attempt budget, available now);
-- * its members cancelled because a parent failed (a failed edge with on_failure cancel) are
--   revived to waiting (scheduled, their failed edges waiting again), when every failed edge into
--   them comes from a job replayed or revived here; so are their own such children, down the graph;
-- * held children of a replayed job (on_failure hold) see their edge waiting again;
-- * everything else stays as it is: completed members (a failure branch that ran included),
--   branches not taken, and members an operator cancelled (a workflow cancel included, so a
--   cancelled workflow is not restarted: its cancelled members have no failed edge from a dead job).
-- A revived member that was archived (pgbus.job_history) moves back to pgbus.job. Audited once,
-- 'workflow_retry'. known is false for no such workflow.
CREATE OR REPLACE FUNCTION pgbus.retry_workflow(workflow_id bigint, actor text DEFAULT NULL,
                                                OUT known boolean, OUT replayed integer,
                                                OUT revived integer)
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
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

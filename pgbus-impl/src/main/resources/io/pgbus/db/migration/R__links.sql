-- Repeatable migration: batches and job dependencies (issue #17; tables in V16). See
-- docs/batches.md and docs/schema.md, "Batches and dependencies".
--
-- Off the plain enqueue and completion paths: pgbus.enqueue / enqueue_many never call these, and a
-- finishing statement (JobStore) calls pgbus.job_finished only for a job whose row says linked.
-- So every function here pins its search_path.

-- The most dependencies one job may have (EnqueueOptions.MAX_DEPENDENCIES in Java).
-- The most members one batch may have (JobBatch.MAX_SIZE, = JobQueue.MAX_BATCH_SIZE).

-- Reports jobs that reached a final state (completed, dead, cancelled) to their batches and their
-- dependents, in the caller's transaction, which is the one that finished them. Arrays of equal
-- length: the job, its batch (NULL: none), its final state and its result (for dependents).
-- Works from the arguments, not the job rows, so a job deleted on completion (retention 0) counts.
--
-- * Batch: pending - 1 and the outcome's count + 1, under the batch row's lock; the finisher that
--   brings pending to 0 enqueues the callback (pgbus.enqueue_job, so it is validated and notified
--   like any job) and records its id. Batches are visited in id order, so two transactions that
--   finish members of the same batches lock them in the same order and cannot deadlock.
-- * Dependents of a completed job: the edge becomes completed and keeps the result; a dependent
--   whose edges are all completed becomes available now, with a wake-up for its queue.
-- * Dependents of a dead or cancelled job: an edge with on_failure = 'hold' becomes failed (the
--   dependent waits; a replay of the dependency that completes releases it); one with 'cancel'
--   cancels the dependent, which is then reported here in turn (a worklist, not recursion, so a
--   long chain needs no stack).
-- * A dependent that completed or was cancelled loses its own incoming edges (their results were
--   delivered); a dead one keeps them, so that a replay still reads them.
CREATE OR REPLACE FUNCTION pgbus.job_finished_as(
    ids     bigint[],
    batches bigint[],
    states  text[],
    results jsonb[])
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    w_ids     bigint[] := ids;
    w_batches bigint[] := batches;
    w_states  text[]   := states;
    w_results jsonb[]  := results;
    v_cancel  bigint[];
    v_skip    bigint[];
    v_release bigint[];
    b record;
    x record;
    v_cb bigint;
    v_woken bigint;
  BEGIN
    WHILE coalesce(array_length(w_ids, 1), 0) > 0 LOOP
      -- Batches, in id order.
      FOR b IN
        SELECT t.batch, count(*) FILTER (WHERE t.state = 'completed')::int AS completed,
               count(*) FILTER (WHERE t.state = 'dead')::int AS dead,
               count(*) FILTER (WHERE t.state = 'cancelled')::int AS cancelled
          FROM unnest(w_batches, w_states) AS t(batch, state)
         WHERE t.batch IS NOT NULL
         GROUP BY t.batch
         ORDER BY t.batch
      LOOP
        UPDATE pgbus.batch k
           SET pending = k.pending - (b.completed + b.dead + b.cancelled),
               completed = k.completed + b.completed,
               dead = k.dead + b.dead,
               cancelled = k.cancelled + b.cancelled
         WHERE k.id = b.batch AND k.pending >= b.completed + b.dead + b.cancelled
        RETURNING k.id, k.pending, k.callback_job_id, k.callback_queue, k.callback_payload,
                  k.callback_priority, k.callback_attempts
          INTO x;
        IF FOUND AND x.pending = 0 AND x.callback_job_id IS NULL THEN
          -- A callback stored before its queue began to encrypt (V53) may be plain: it is
          -- enqueued as stored, for the handler to refuse and `pgbus reencrypt` to seal, rather
          -- than failing the completion of the batch's last member.
          PERFORM set_config('pgbus.stored_payload', 'on', true);
          SELECT e.id INTO v_cb
            FROM pgbus.enqueue_job(x.callback_queue::text, x.callback_payload, NULL,
                                   x.callback_priority::int, x.callback_attempts) e;
          PERFORM set_config('pgbus.stored_payload', '', true);
          UPDATE pgbus.batch k SET callback_job_id = v_cb, finished_at = now() WHERE k.id = x.id;
        END IF;
      END LOOP;

      -- The finished jobs' undecided edges, decided by their kind (pgbus.edge_decision,
      -- R__workflow.sql; a plain dependency is a success edge): completed (taken; it keeps the
      -- parent's result), not_taken, or failed. A failed edge is decided again when its parent,
      -- replayed, completes; a decided edge otherwise stays as it is.
      WITH decided AS (
        UPDATE pgbus.job_dependency d
           SET state = pgbus.edge_decision(d.kind, d.predicate, t.state, t.result),
               result = CASE WHEN t.state = 'completed' THEN t.result ELSE d.result END
          FROM unnest(w_ids, w_states, w_results) AS t(id, state, result)
         WHERE d.depends_on = t.id AND t.state IN ('completed', 'dead', 'cancelled')
           AND (d.state = 'waiting' OR (d.state = 'failed' AND t.state = 'completed'))
        RETURNING d.job_id, d.state, d.on_failure)
      SELECT array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'completed'),
             array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'not_taken'),
             array_agg(DISTINCT e.job_id) FILTER (WHERE e.state = 'failed' AND e.on_failure = 'cancel')
        INTO v_release, v_skip, v_cancel
        FROM decided e;

      -- A waiting dependent with no edge left untaken may run now, with a wake-up. Its row
      -- is locked first, in id order, in a statement of its own: two transactions that complete
      -- two dependencies of one job at once then check its edges one after the other, the second
      -- with a snapshot taken after the first committed, so one of them releases it (checked in
      -- the same statement as the lock, both could see the other's edge still waiting).
      IF v_release IS NOT NULL THEN
        PERFORM 1
           FROM pgbus.job j
          WHERE j.id = ANY (v_release)
          ORDER BY j.id
            FOR UPDATE;
        WITH released AS (
          UPDATE pgbus.job j
             SET state = 'available', run_at = now()
           WHERE j.id = ANY (v_release)
             AND j.state = 'scheduled'
             AND NOT EXISTS (SELECT 1 FROM pgbus.job_dependency o
                              WHERE o.job_id = j.id AND o.state <> 'completed')
          RETURNING j.queue)
        SELECT count(*) INTO v_woken
          FROM (SELECT pgbus.notify(r.queue, now()) FROM released r GROUP BY r.queue) n;
      END IF;

      -- A dependent that completed or was cancelled needs its incoming edges no more; a dead one
      -- keeps them, so that a replay still reads its dependencies' results. A workflow's member
      -- keeps them all: they are its graph (the admin read, a workflow retry); the leader deletes
      -- them with its jobs (LinkStore).
      DELETE FROM pgbus.job_dependency d
       USING unnest(w_ids, w_states) AS t(id, state)
       WHERE d.job_id = t.id AND t.state IN ('completed', 'cancelled')
         AND NOT EXISTS (SELECT 1 FROM pgbus.workflow_job m WHERE m.job_id = d.job_id);

      -- The next round: the dependents just cancelled, reported in turn. A dependent with an
      -- edge not taken can never have all its edges taken: it ends cancelled at once, and its
      -- error says which branch was not taken (one that a failed edge cancels too says nothing).
      w_ids := NULL;
      IF v_cancel IS NOT NULL OR v_skip IS NOT NULL THEN
        WITH cancelled AS (
          UPDATE pgbus.job j
             SET state = 'cancelled', finalized_at = now(),
                 errors = CASE WHEN j.id = ANY (v_skip) AND NOT j.id = ANY (coalesce(v_cancel, '{}'))
                               THEN jsonb_build_array(jsonb_build_object(
                                      'attempt', j.attempt, 'at', now(),
                                      'error', 'branch not taken: ' || (
                                        SELECT string_agg('job ' || o.depends_on || ' (' || o.kind
                                                          || coalesce(' ' || o.predicate::text, '')
                                                          || ')', ', ' ORDER BY o.depends_on)
                                          FROM pgbus.job_dependency o
                                         WHERE o.job_id = j.id AND o.state = 'not_taken')))
                                    || j.errors
                               ELSE j.errors END
           WHERE j.id = ANY (coalesce(v_cancel, '{}') || coalesce(v_skip, '{}'))
             AND j.state IN ('scheduled', 'available', 'retryable')
          RETURNING j.id, j.batch_id)
        SELECT array_agg(c.id), array_agg(c.batch_id), array_agg('cancelled'::text),
               array_agg(NULL::jsonb)
          INTO w_ids, w_batches, w_states, w_results
          FROM cancelled c;
      END IF;
    END LOOP;
  END $$;

-- pgbus.job_finished_as for jobs whose rows still exist (every path but a delete on completion):
-- reads their batch, final state and result. A job not in a final state is left out.
CREATE OR REPLACE FUNCTION pgbus.job_finished(ids bigint[])
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_ids bigint[];
    v_batches bigint[];
    v_states text[];
    v_results jsonb[];
  BEGIN
    SELECT array_agg(j.id ORDER BY j.id), array_agg(j.batch_id ORDER BY j.id),
           array_agg(j.state::text ORDER BY j.id), array_agg(j.result ORDER BY j.id)
      INTO v_ids, v_batches, v_states, v_results
      FROM pgbus.job j
     WHERE j.id = ANY (job_finished.ids) AND j.state IN ('completed', 'dead', 'cancelled');
    IF v_ids IS NOT NULL THEN
      PERFORM pgbus.job_finished_as(v_ids, v_batches, v_states, v_results);
    END IF;
  END $$;

-- Enqueues one job that runs only after every job of depends_on completed (EnqueueOptions
-- .afterJobs), in the caller's transaction; returns its id (with a unique key that a waiting or
-- running job holds: that job's id, duplicate = true, and nothing written). on_failures (per dependency, 'hold' or
-- 'cancel'; NULL: all 'cancel') says what a dependency that dies or is cancelled does to it.
--   SELECT id FROM pgbus.enqueue_after('report', '{}', ARRAY[41, 42]);
--
-- Refused, with nothing written: more than 100 dependencies, a NULL id, an id no job has (also a
-- job deleted on completion or pruned), on_failure other than hold or cancel. A cycle cannot be
-- formed this way: a job can only wait on jobs that exist before it, and no existing job can
-- wait on one that does not exist yet (edges are only ever inserted here, with their dependent;
-- its own id, or a later one, is refused as unknown).
--
-- While it waits, the job is scheduled with run_at 100 years ahead: the claim's run_at bound ends
-- its range before it, as for any delayed job.
--
-- No lock on the dependencies' rows until commit (issue #23): the caller's transaction may stay
-- open for long, and a row lock held that long (the UPDATE ... linked = true this function used
-- to run) made a running dependency's completion wait for it, holding its worker and connection.
-- The dependencies' states are read once, without a lock; a dependency that finishes after that
-- read, and whose finisher commits without seeing this uncommitted edge, is caught at this
-- transaction's commit by the deferred trigger on the edge (pgbus.dependency_linked, V24), which
-- only then locks the dependency, for the few moments until the commit.
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
    v_ids     bigint[];
    v_states  text[];
    v_results jsonb[];
    v_waiting integer;
    v_failed integer;
  BEGIN
    PERFORM pgbus.check_dependencies(enqueue_after.queue, enqueue_after.depends_on, v_policy);
    v_deps := ARRAY(SELECT DISTINCT d FROM unnest(enqueue_after.depends_on) d ORDER BY d);
    v_missing := ARRAY(SELECT d FROM unnest(v_deps) d
                        WHERE NOT EXISTS (SELECT 1 FROM pgbus.job_all j WHERE j.id = d));
    IF cardinality(v_missing) > 0 THEN
      RAISE EXCEPTION 'pgbus: unknown job id(s) % in the dependencies of a job for queue %: depend only on jobs that exist (a job deleted on completion or pruned is gone)',
        v_missing, enqueue_after.queue
        USING ERRCODE = 'foreign_key_violation';
    END IF;
    -- The dependencies' states, read once (no lock, see above): the delay and the edges below
    -- both come from this one read, so they agree, whatever finishes meanwhile. A finished
    -- dependency may have moved to pgbus.job_history (V33): job_all reads both, each job once.
    SELECT array_agg(j.id ORDER BY j.id), array_agg(j.state::text ORDER BY j.id),
           array_agg(j.result ORDER BY j.id)
      INTO v_ids, v_states, v_results
      FROM pgbus.job_all j
     WHERE j.id = ANY (v_deps);
    SELECT count(*) FILTER (WHERE t.state NOT IN ('completed', 'dead', 'cancelled')),
           count(*) FILTER (WHERE t.state IN ('dead', 'cancelled'))
      INTO v_waiting, v_failed
      FROM unnest(v_states) AS t(state);
    SELECT e.id, e.duplicate INTO enqueue_after.id, enqueue_after.duplicate
      FROM pgbus.enqueue_job(enqueue_after.queue, enqueue_after.payload,
                             CASE WHEN v_waiting + v_failed > 0 THEN now() + interval '36500 days' END,
                             enqueue_after.priority, enqueue_after.max_attempts,
                             enqueue_after.unique_key, enqueue_after.trace_parent,
                             enqueue_after.trace_state) e;
    IF enqueue_after.duplicate THEN
      RETURN;
    END IF;
    -- Due when its dependencies are done: the queue's max-wait (V56) counts from now, not from the
    -- far run_at enqueue_job gave it while they wait.
    UPDATE pgbus.job j
       SET linked = true,
           start_by = now() + (SELECT CASE WHEN j.queue::text = ANY (s.max_wait_queues)
                                           THEN (SELECT w.max_wait FROM pgbus.queue_max_wait w
                                                  WHERE w.queue::text = j.queue::text) END
                                 FROM pgbus.setting s)  -- probed when listed (V57)
     WHERE j.id = enqueue_after.id;
    -- A dependency given twice keeps its first policy. In id order: the deferred triggers lock
    -- the dependencies at commit in the order of these rows.
    INSERT INTO pgbus.job_dependency (depends_on, job_id, on_failure, state, result)
    SELECT DISTINCT ON (j.id) j.id, enqueue_after.id, p.on_failure,
           CASE WHEN j.state = 'completed' THEN 'completed'
                WHEN j.state IN ('dead', 'cancelled') THEN 'failed'
                ELSE 'waiting' END,
           CASE WHEN j.state = 'completed' THEN j.result END
      FROM unnest(enqueue_after.depends_on, v_policy) WITH ORDINALITY AS p(id, on_failure, ord)
      JOIN unnest(v_ids, v_states, v_results) AS j(id, state, result) ON j.id = p.id
     ORDER BY j.id, p.ord;
    IF EXISTS (SELECT 1 FROM pgbus.job_dependency d
                WHERE d.job_id = enqueue_after.id AND d.state = 'failed' AND d.on_failure = 'cancel') THEN
      UPDATE pgbus.job j SET state = 'cancelled', finalized_at = now() WHERE j.id = enqueue_after.id;
      PERFORM pgbus.job_finished(ARRAY[enqueue_after.id]);
    END IF;
  END $$;

-- The deferred trigger on each new edge of pgbus.job_dependency (V24: CONSTRAINT TRIGGER ...
-- DEFERRABLE INITIALLY DEFERRED), so it runs at the commit of the transaction that called
-- pgbus.enqueue_after. It closes the race that enqueue_after's read of the dependency leaves open
-- without a lock: the dependency finishes after that read, and its finisher, which reports to the
-- dependents it sees, commits without seeing this edge, still uncommitted.
--
-- Here the dependency's row is locked (FOR NO KEY UPDATE) and marked linked. Three cases:
-- * its finisher committed before: the row says so, and the edge is settled here, as
--   pgbus.job_finished_as would have (completed: the edge keeps the result, and the dependent
--   runs when no edge is left undone; dead or cancelled: the edge fails, and 'cancel' cancels
--   the dependent);
-- * its finisher wrote the row and has not committed: the lock waits for that commit (a
--   finishing transaction ends right after its finishing statement), then reads as above;
-- * it has not finished: its finishing UPDATE waits for this commit, which follows at once, and
--   then returns linked = true, so its transaction calls pgbus.job_finished, whose next
--   statement sees this edge.
-- So the lock lasts from this trigger to the commit: never the caller's whole transaction. A
-- dependency gone by now was deleted on completion (pgbus.retention.completed=0): completed,
-- with no result kept, as its finisher reports it (JobStore, FINISHED_DELETED).
--
-- The previous release's enqueue_after, which locked at the enqueue, works with it: the trigger
-- then finds its own lock and the edge as it wrote it.
CREATE OR REPLACE FUNCTION pgbus.dependency_linked() RETURNS trigger
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_state  text;
    v_result jsonb;
    v_linked boolean;
  BEGIN
    SELECT j.state::text, j.result, j.linked INTO v_state, v_result, v_linked
      FROM pgbus.job j
     WHERE j.id = NEW.depends_on
       FOR NO KEY UPDATE;
    IF NOT FOUND THEN
      -- Moved to pgbus.job_history since the enqueue read it (V33): final, so no lock is needed.
      SELECT h.state::text, h.result INTO v_state, v_result
        FROM pgbus.job_history h
       WHERE h.id = NEW.depends_on;
      IF NOT FOUND THEN
        v_state := 'completed';
        v_result := NULL;
      END IF;
    ELSIF NOT v_linked THEN
      UPDATE pgbus.job j SET linked = true WHERE j.id = NEW.depends_on;
    END IF;
    IF v_state NOT IN ('completed', 'dead', 'cancelled') THEN
      RETURN NULL;  -- its finisher sees linked and this edge
    END IF;
    -- Its finisher did not see this edge: decide it now, as the finisher would have. Reported
    -- again without its batch (the finisher counted it there): only undecided edges change, so
    -- the dependents the finisher saw are left as they are.
    PERFORM pgbus.job_finished_as(ARRAY[NEW.depends_on], ARRAY[NULL::bigint], ARRAY[v_state],
                                  ARRAY[v_result]);
    RETURN NULL;
  END $$;

-- The bounds of a dependency list, with the Java API's messages (EnqueueOptions.afterJobs).
CREATE OR REPLACE FUNCTION pgbus.check_dependencies(queue text, depends_on bigint[], on_failures text[])
  RETURNS void
  LANGUAGE plpgsql IMMUTABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF depends_on IS NULL OR cardinality(depends_on) = 0 THEN
      RAISE EXCEPTION 'pgbus: a job for queue % waits on no job: pass at least one job id, or enqueue it without dependencies', queue
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF cardinality(depends_on) > 100 THEN
      RAISE EXCEPTION 'pgbus: a job for queue % waits on % jobs, over the limit of 100 dependencies per job: wait on a batch''s callback instead', queue, cardinality(depends_on)
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF array_position(depends_on, NULL) IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: dependency % of a job for queue % is NULL: pass job ids', array_position(depends_on, NULL), queue
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF cardinality(on_failures) IS DISTINCT FROM cardinality(depends_on)
       OR EXISTS (SELECT 1 FROM unnest(on_failures) f WHERE f IS NULL OR f NOT IN ('hold', 'cancel')) THEN
      RAISE EXCEPTION 'pgbus: on_failures % (queue %) must give hold or cancel for each of the % dependencies', on_failures, queue, cardinality(depends_on)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
  END $$;

-- Enqueues a batch: its members (arrays of equal length, as pgbus.enqueue_many, without unique
-- keys or delays) and the callback that the transaction finishing the last member enqueues.
-- Returns the batch id and the member ids in input order. At most 10000 members.
CREATE OR REPLACE FUNCTION pgbus.enqueue_batch(
    queues            text[],
    payloads          jsonb[],
    priorities        integer[],
    max_attempts      integer[],
    callback_queue    text,
    callback_payload  jsonb,
    callback_priority integer DEFAULT 0,
    callback_attempts integer DEFAULT 25,
    trace_parents     text[]  DEFAULT NULL,
    trace_states      text[]  DEFAULT NULL,
    OUT batch_id bigint,
    OUT job_ids  bigint[])
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_n integer := coalesce(array_length(queues, 1), 0);
    v_cbq pgbus.queue_name := pgbus.queue(enqueue_batch.callback_queue);
    v_limit integer;
    v_sealed text[];  -- the queues that encrypt (V53)
    v_waits text[];   -- the queues that have a max-wait (V57)
  BEGIN
    SELECT s.max_payload_bytes, s.encrypted_queues, s.max_wait_queues
      INTO v_limit, v_sealed, v_waits
      FROM pgbus.setting s;
    v_limit := coalesce(v_limit, 1048576);
    IF v_n = 0 OR v_n > 10000 THEN
      RAISE EXCEPTION 'pgbus: a batch of % jobs is out of range: a batch has 1 to 10000 members; split a larger one, or chain batches through their callbacks', v_n
        USING ERRCODE = 'program_limit_exceeded';
    END IF;
    IF enqueue_batch.callback_payload IS NULL OR jsonb_typeof(enqueue_batch.callback_payload) = 'null' THEN
      RAISE EXCEPTION 'pgbus: the callback payload of a batch (queue %) must not be null; use ''{}'' for an empty payload', v_cbq
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM pgbus.check_payload(v_cbq, enqueue_batch.callback_payload);
    INSERT INTO pgbus.batch (size, pending, callback_queue, callback_payload, callback_priority,
                             callback_attempts)
    VALUES (v_n, v_n, v_cbq, enqueue_batch.callback_payload, enqueue_batch.callback_priority,
            enqueue_batch.callback_attempts)
    RETURNING id INTO batch_id;
    IF pg_catalog.array_position(payloads, NULL) IS NOT NULL
       OR pg_catalog.array_position(payloads, 'null'::jsonb) IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: payload % of the batch is null; use ''{}'' for an empty payload',
        coalesce(array_position(payloads, NULL), array_position(payloads, 'null'::jsonb))
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- An encrypting queue (V53) takes only sealed payloads, the callback's included.
    IF v_sealed IS NOT NULL THEN
      IF v_cbq::text = ANY (v_sealed) THEN
        PERFORM pgbus.check_sealed(v_cbq, enqueue_batch.callback_payload);
      END IF;
      PERFORM pgbus.check_sealed(t.q, t.p, t.ord::integer)
         FROM unnest(queues, payloads) WITH ORDINALITY AS t(q, p, ord)
        WHERE t.q = ANY (v_sealed);
    END IF;
    -- As in pgbus.enqueue_many: only a payload that could be over the limit is measured.
    PERFORM pgbus.check_payload(t.q, t.p)
       FROM unnest(queues, payloads) AS t(q, p)
      WHERE pg_column_size(t.p) > v_limit / 6 OR pg_column_compression(t.p) IS NOT NULL;
    IF trace_parents IS NOT NULL OR trace_states IS NOT NULL THEN
      PERFORM pgbus.check_trace(pgbus.queue(queues[i]), trace_parents[i], trace_states[i])
         FROM generate_series(1, v_n) AS g(i);
    END IF;
    -- The members as pgbus.enqueue_many inserts them, with their batch, in one INSERT; the wakes,
    -- one per queue, go out at commit (job_wake, V27). Identity values follow the ORDER BY, so ids
    -- are in input order.
    WITH inserted AS (
      INSERT INTO pgbus.job (queue, state, priority, payload, max_attempts, trace_parent,
                             trace_state, batch_id, linked, start_by)
      SELECT pgbus.queue(t.q), 'available', t.pr, t.p, t.m, trace_parents[t.ord],
             trace_states[t.ord], enqueue_batch.batch_id, true,
             -- The queue's max-wait (V56), from now: a member is due at once. Probed only for
             -- a queue listed in pgbus.setting (V57).
             now() + CASE WHEN t.q = ANY (v_waits)
                          THEN (SELECT w.max_wait FROM pgbus.queue_max_wait w
                                 WHERE w.queue::text = t.q) END
        FROM unnest(queues, payloads, priorities, max_attempts)
             WITH ORDINALITY AS t(q, p, pr, m, ord)
       ORDER BY t.ord
      RETURNING id, queue)
    SELECT array_agg(i.id ORDER BY i.id) INTO job_ids FROM inserted i;
  END $$;

-- Repeatable migration: setting and clearing a queue's flow-control limits (V14,
-- pgbus.queue_limit). Flyway applies it after the versioned migrations and again whenever this
-- file changes. See docs/schema.md, "Flow control". Off the hot path: both pin their path.

-- Sets a queue's limits, replacing the ones it had: global_concurrency (executions of the queue
-- across the fleet: worker slots running its jobs, see R__claim.sql), key_concurrency (running
-- jobs per concurrency key; NULL: 1) and a rate limit, rate_limit job starts per rate_window
-- (V19; windows aligned to the epoch), and FIFO per key: key_fifo starts a key's jobs in enqueue
-- order, one at a time; key_fifo_skip_dead lets a dead job's key go on (else it holds the key's
-- later jobs). NULL for all keeps the row, with no global limit and a key
-- limit of 1: a queue whose jobs carry keys needs its row for the claim to count them. Raises on a
-- limit of 0 or less or over its bound, a window under a millisecond or over a day, a rate with
-- no window or a window with no rate, and writes nothing then. Engines call it at start for every
-- queue they serve.
--   SELECT pgbus.queue_limit_set('partner_api', global_concurrency => 5);
--   SELECT pgbus.queue_limit_set('mailer', rate_limit => 100, rate_window => interval '1 minute');
CREATE OR REPLACE FUNCTION pgbus.queue_limit_set(
    queue              text,
    global_concurrency integer  DEFAULT NULL,
    key_concurrency    integer  DEFAULT NULL,
    updated_by         text     DEFAULT NULL,
    rate_limit         integer  DEFAULT NULL,
    rate_window        interval DEFAULT NULL,
    key_fifo           boolean  DEFAULT false,
    key_fifo_skip_dead boolean  DEFAULT false)
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_limit_set.queue);
  BEGIN
    IF queue_limit_set.global_concurrency NOT BETWEEN 1 AND 100000 THEN
      RAISE EXCEPTION 'pgbus: global concurrency % for queue % is invalid: use 1 to 100000 running jobs, or NULL for no limit',
        queue_limit_set.global_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.key_concurrency NOT BETWEEN 1 AND 100000 THEN
      RAISE EXCEPTION 'pgbus: key concurrency % for queue % is invalid: use 1 to 100000 running jobs per key, or NULL for 1',
        queue_limit_set.key_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.rate_limit NOT BETWEEN 1 AND 1000000 THEN
      RAISE EXCEPTION 'pgbus: rate limit % for queue % is invalid: use 1 to 1000000 job starts per window, or NULL for no rate limit',
        queue_limit_set.rate_limit, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.rate_limit IS NOT NULL AND queue_limit_set.rate_window IS NULL THEN
      RAISE EXCEPTION 'pgbus: rate limit % for queue % has no window: pass rate_window too, for example interval ''1 minute''',
        queue_limit_set.rate_limit, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF queue_limit_set.rate_window IS NOT NULL AND queue_limit_set.rate_limit IS NULL THEN
      RAISE EXCEPTION 'pgbus: rate window % for queue % has no rate limit: pass rate_limit too (job starts per window)',
        queue_limit_set.rate_window, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF NOT (queue_limit_set.rate_window BETWEEN interval '1 millisecond' AND interval '1 day') THEN
      RAISE EXCEPTION 'pgbus: rate window % for queue % is invalid: use 1 millisecond to 1 day',
        queue_limit_set.rate_window, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(queue_limit_set.key_fifo_skip_dead, false)
       AND NOT coalesce(queue_limit_set.key_fifo, false) THEN
      RAISE EXCEPTION 'pgbus: key_fifo_skip_dead for queue % needs key_fifo: without FIFO per key a dead job holds nothing back',
        v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF coalesce(queue_limit_set.key_fifo, false) AND queue_limit_set.key_concurrency <> 1 THEN
      RAISE EXCEPTION 'pgbus: key concurrency % for queue % contradicts key_fifo, which starts a key''s jobs one at a time',
        queue_limit_set.key_concurrency, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO pgbus.queue_limit AS l
           (queue, global_concurrency, key_concurrency, rate_limit, rate_window, key_fifo,
            key_fifo_skip_dead, updated_by)
    VALUES (v_queue, queue_limit_set.global_concurrency, queue_limit_set.key_concurrency,
            queue_limit_set.rate_limit, queue_limit_set.rate_window,
            coalesce(queue_limit_set.key_fifo, false),
            coalesce(queue_limit_set.key_fifo_skip_dead, false),
            coalesce(queue_limit_set.updated_by, current_user::text))
    ON CONFLICT (queue) DO UPDATE
      SET global_concurrency = excluded.global_concurrency,
          key_concurrency = excluded.key_concurrency,
          rate_limit = excluded.rate_limit,
          rate_window = excluded.rate_window,
          key_fifo = excluded.key_fifo,
          key_fifo_skip_dead = excluded.key_fifo_skip_dead,
          -- A new window length counts afresh; the same one keeps its window's count.
          rate_window_start = CASE WHEN l.rate_window IS NOT DISTINCT FROM excluded.rate_window
                                   THEN l.rate_window_start END,
          rate_count = CASE WHEN l.rate_window IS NOT DISTINCT FROM excluded.rate_window
                            THEN l.rate_count ELSE 0 END,
          updated_at = now(),
          updated_by = excluded.updated_by
      WHERE (l.global_concurrency, l.key_concurrency, l.rate_limit, l.rate_window, l.key_fifo,
             l.key_fifo_skip_dead)
            IS DISTINCT FROM (excluded.global_concurrency, excluded.key_concurrency,
                              excluded.rate_limit, excluded.rate_window, excluded.key_fifo,
                              excluded.key_fifo_skip_dead);
    -- A raised limit frees capacity now: wake the queue's workers at commit.
    PERFORM pgbus.notify(v_queue, now());
  END $$;

-- Removes a queue's limits: its claims no longer count running jobs. A queue whose waiting jobs
-- carry concurrency keys keeps its row (the keys still hold, one running job per key), and so does
-- a fair queue (V50: its fair share stays; pgbus.queue_fair_set removes it); true when the row went.
CREATE OR REPLACE FUNCTION pgbus.queue_limit_clear(queue text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_limit_clear.queue);
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgbus.queue_limit l WHERE l.queue = v_queue) THEN
      RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM pgbus.queue_limit l
                WHERE l.queue = v_queue AND l.fair_key IS NOT NULL)
       OR EXISTS (SELECT 1 FROM pgbus.job j
                WHERE j.queue = v_queue AND j.concurrency_key IS NOT NULL
                  AND j.state IN ('available', 'scheduled', 'retryable', 'running')) THEN
      PERFORM pgbus.queue_limit_set(v_queue);
      RETURN false;
    END IF;
    DELETE FROM pgbus.queue_limit l WHERE l.queue = v_queue;
    PERFORM pgbus.notify(v_queue, now());
    RETURN true;
  END $$;

-- Sets or removes a queue's fair share (issue #30, V50; docs/schema.md, "Fair share"): fair_key
-- 'concurrency_key' deals each priority level's due jobs over the jobs' concurrency keys,
-- round-robin, weighted by weights ({"tenantA": 3}, 1 to 1000 each; a key not named weighs 1);
-- NULL removes it (and the queue's passes). The queue keeps or gets its pgbus.queue_limit row (a
-- new one with no limit and a key limit of 1, as pgbus.queue_limit_set makes it), whose other
-- columns stay as they are. Raises on an unknown key source, a weights value that is not such an
-- object, or weights without a key, and writes nothing then; the same bounds as FairShare in Java.
--   SELECT pgbus.queue_fair_set('exports', 'concurrency_key', '{"tenantA": 3}');
CREATE OR REPLACE FUNCTION pgbus.queue_fair_set(
    queue      text,
    fair_key   text,
    weights    jsonb DEFAULT NULL,
    updated_by text  DEFAULT NULL)
  RETURNS void
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  #variable_conflict use_variable
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_fair_set.queue);
    v_bad text;
  BEGIN
    IF fair_key IS DISTINCT FROM 'concurrency_key' AND fair_key IS NOT NULL THEN
      RAISE EXCEPTION 'pgbus: fair key % for queue % is invalid: use ''concurrency_key'' (the jobs'' concurrency keys are the tenants), or NULL for none',
        pg_catalog.quote_literal(pg_catalog.left(fair_key, 80)), v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF weights IS NOT NULL AND fair_key IS NULL THEN
      RAISE EXCEPTION 'pgbus: fair weights for queue % need a fair key: pass fair_key => ''concurrency_key''', v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF weights IS NOT NULL AND jsonb_typeof(weights) <> 'object' THEN
      RAISE EXCEPTION 'pgbus: fair weights % for queue % are invalid: use an object of tenant: weight, for example {"tenantA": 3}',
        pg_catalog.left(weights::text, 80), v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (SELECT count(*) FROM jsonb_object_keys(coalesce(weights, '{}'))) > 1000 THEN
      RAISE EXCEPTION 'pgbus: fair weights for queue % name % tenants, over the limit of 1000: weigh the few that need it (a tenant not named weighs 1)',
        v_queue::text, (SELECT count(*) FROM jsonb_object_keys(weights))
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT pg_catalog.format('%s: %s', pg_catalog.left(w.key, 80), pg_catalog.left(w.value::text, 20)) INTO v_bad
      FROM jsonb_each(coalesce(weights, '{}')) w
     WHERE pg_catalog.length(w.key) NOT BETWEEN 1 AND 255 OR pg_catalog.btrim(w.key) = ''
        OR jsonb_typeof(w.value) <> 'number' OR w.value::text !~ '^[0-9]+$'
        OR w.value::text::numeric NOT BETWEEN 1 AND 1000
     LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION 'pgbus: fair weight % for queue % is invalid: use a concurrency key of 1 to 255 characters and a whole weight from 1 to 1000',
        v_bad, v_queue::text
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF fair_key IS NULL THEN
      UPDATE pgbus.queue_limit l SET fair_key = NULL, fair_weights = NULL, fair_clock = 0
       WHERE l.queue = v_queue AND l.fair_key IS NOT NULL;
      DELETE FROM pgbus.queue_fair_pass p WHERE p.queue = v_queue;
      RETURN;
    END IF;
    INSERT INTO pgbus.queue_limit AS l (queue, fair_key, fair_weights, updated_by)
    VALUES (v_queue, fair_key, weights, coalesce(updated_by, current_user::text))
    ON CONFLICT ON CONSTRAINT queue_limit_pkey DO UPDATE
      SET fair_key = excluded.fair_key, fair_weights = excluded.fair_weights,
          updated_at = now(), updated_by = excluded.updated_by
      WHERE (l.fair_key, l.fair_weights) IS DISTINCT FROM (excluded.fair_key, excluded.fair_weights);
  END $$;

-- Records whether a queue encrypts its payloads (issue #30, V53; docs/schema.md, "V53: encrypting
-- queues") in pgbus.setting.encrypted_queues: with encrypt true the SQL enqueue functions refuse
-- a plaintext payload for it (pgbus.check_sealed); false takes it out, and plain payloads are taken
-- again. Every engine calls it at start for the queues it serves or encrypts, from
-- pgbus.queue.<name>.encrypt: the last to start decides. True when it changed anything.
--   SELECT pgbus.queue_encrypt_set('payroll', true);
CREATE OR REPLACE FUNCTION pgbus.queue_encrypt_set(
    queue      text,
    encrypt    boolean,
    updated_by text DEFAULT NULL)
  RETURNS boolean
  LANGUAGE plpgsql VOLATILE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  DECLARE
    v_queue pgbus.queue_name := pgbus.queue(queue_encrypt_set.queue);
  BEGIN
    IF queue_encrypt_set.encrypt IS NULL THEN
      RAISE EXCEPTION 'pgbus: encrypt for queue % is NULL: pass true (SQL enqueues must be sealed) or false', v_queue::text
        USING ERRCODE = 'null_value_not_allowed';
    END IF;
    -- Sorted and without duplicates; NULL when no queue encrypts, which the enqueue tests first.
    UPDATE pgbus.setting s
       SET encrypted_queues = nullif(ARRAY(
             SELECT DISTINCT x.q
               FROM unnest(coalesce(s.encrypted_queues, '{}') || ARRAY[v_queue::text]) AS x(q)
              WHERE x.q <> v_queue::text OR queue_encrypt_set.encrypt
              ORDER BY x.q), '{}')
     WHERE (v_queue::text = ANY (coalesce(s.encrypted_queues, '{}'))) IS DISTINCT FROM queue_encrypt_set.encrypt;
    RETURN FOUND;
  END $$;

-- pgbus schema V57 (issue #27, the insert path): the queues that have a max-wait, where every
-- enqueue reads them already. See docs/schema.md, "V57: the queues with a max-wait".
--
-- V56 made every enqueue probe pgbus.queue_max_wait by its primary key for the queue's window,
-- though almost no queue has one. As V53 did for the encrypting queues, the list of the queues
-- that have a row is a column of the one pgbus.setting row, which the enqueue functions read for
-- the payload limit: they probe pgbus.queue_max_wait only for a queue listed there.
--
-- The list follows the table by a trigger, whoever writes it: pgbus.queue_max_wait_set (an
-- operator, the engines at start, those of the previous build included) or a plain INSERT, UPDATE,
-- DELETE or TRUNCATE. NULL: no queue has a max-wait.
--
-- Expand only: a build before V57 neither reads nor writes the column, and its enqueues run the
-- R__ functions of this schema. The previous release (0.1.0) knows neither table.
ALTER TABLE pgbus.setting ADD COLUMN max_wait_queues text[];

-- The trigger's function, unless R__start_by.sql's definition is there already (a schema whose
-- repeatable migrations ran ahead of this one). Its current definition is in R__start_by.sql; this
-- one is the same, so a write between this migration and the repeatable ones is listed too.
DO $do$
BEGIN
  IF pg_catalog.to_regprocedure('pgbus.queue_max_wait_listed()') IS NULL THEN
    CREATE FUNCTION pgbus.queue_max_wait_listed() RETURNS trigger
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
  END IF;
END $do$;

CREATE TRIGGER queue_max_wait_listed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pgbus.queue_max_wait
  FOR EACH STATEMENT EXECUTE FUNCTION pgbus.queue_max_wait_listed();

UPDATE pgbus.setting s
   SET max_wait_queues = nullif(ARRAY(SELECT w.queue::text FROM pgbus.queue_max_wait w ORDER BY 1),
                                '{}');

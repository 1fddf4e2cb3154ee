-- pgbus schema V56: a queue's max-wait where the SQL enqueue functions read it (issue #31, the
-- loose ends of item 3). See docs/schema.md, "V56: a queue's max-wait".
--
-- pgbus.queue.<name>.max-wait gave a deadline only to what the Java API enqueued in a JVM that
-- configured it. With the window here, every enqueue function (pgbus.enqueue, enqueue_job,
-- enqueue_many, enqueue_batch's members, enqueue_after, enqueue_unique, a batch's callback) gives a
-- job without a deadline of its own start_by = when it is due + max_wait, in its INSERT. Engines
-- write the rows at start (the newest build wins, as for limits, V26); an operator can with
-- pgbus.queue_max_wait_set (R__start_by.sql).
--
-- Apart from pgbus.queue_limit: a row there makes the claim count the queue as limited (V14).
-- Expand only: a new table; the previous release neither reads nor writes it, and its enqueues
-- run the R__enqueue.sql of whichever build migrated last.
CREATE TABLE pgbus.queue_max_wait (
  queue      pgbus.queue_name PRIMARY KEY,
  -- As QueuePolicy.maxWait: 1 ms to the schedule horizon.
  max_wait   interval NOT NULL CONSTRAINT queue_max_wait_chk
               CHECK (max_wait BETWEEN interval '1 millisecond' AND interval '36500 days'),
  -- The build that wrote it (V26's rule); NULL: an operator.
  build      text CONSTRAINT queue_max_wait_build_chk
               CHECK (build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'),
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text
);

-- Every role that enqueues reads it (the enqueue functions run with the caller's rights), and a
-- window is no secret, as pgbus.setting (V5). Writing it needs the owner's grant.
GRANT SELECT ON pgbus.queue_max_wait TO PUBLIC;

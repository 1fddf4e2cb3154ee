-- pgbus schema V48 (issue #27, "enqueue at 0.8× a raw insert"): job_wake's WHEN, shorter.
--
-- PostgreSQL reads the WHEN of a row trigger from its stored text, plans and compiles it again
-- at every statement that inserts into pgbus.job, before the first row: V27's WHEN, with its
-- plain test of the memo string, cost a single enqueue about 130,000 instructions (callgrind,
-- docs/performance.md "The wake's cost"). The new plain test compares one setting with the queue
-- (pgbus.wake_now, kept by pgbus.wake_first: the queue of the last row due now), so that a batch's
-- rows after its first still pass without a PL/pgSQL call, and everything else is in
-- pgbus.wake_first (R__notify.sql), which also answers false at once in a transaction that set
-- pgbus.wake = 'client' (the Java API): no event is queued, no trigger fires at its commit.
--
-- Expand only, for a rolling upgrade: the trigger calls the same functions with the same
-- signatures, and each WHEN is right with either generation of them (the old wake_first never
-- sets pgbus.wake_now, so under this WHEN it is called for every row and dedups as before;
-- under V27's WHEN the new one dedups as the old one did). The builds before this one neither
-- read nor write pgbus.wake_now. Dropped and created in this migration's transaction, so no
-- insert runs between them without the trigger: DROP TRIGGER takes pgbus.job's ACCESS EXCLUSIVE
-- lock until the commit (it waits for every transaction holding a lock on pgbus.job, and new
-- statements on it wait behind it; no scan).

DROP TRIGGER job_wake ON pgbus.job;

CREATE CONSTRAINT TRIGGER job_wake
  AFTER INSERT ON pgbus.job
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((NEW.run_at OPERATOR(pg_catalog.>) pg_catalog.now()
         OR pg_catalog.current_setting('pgbus.wake_now', true) IS DISTINCT FROM NEW.queue::text)
        AND pgbus.wake_first(NEW.queue::text, NEW.run_at))
  EXECUTE FUNCTION pgbus.job_wake();

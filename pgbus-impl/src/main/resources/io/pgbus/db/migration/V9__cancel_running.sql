-- pgbus schema V9: cancelling a running job from any JVM (issue #14). See docs/schema.md and
-- docs/operations.md ("Cancelling a running job").
--   * pgbus.job.cancel_attempt: the attempt an operator asked to cancel while it ran, or NULL.
--     JobQueue.cancel sets it to the running attempt and sends NOTIFY "pgbus-cancel" with the
--     payload '<id>:<attempt>'. The JVM that runs that attempt interrupts its handler, but only
--     after reading this column back: any login may NOTIFY any channel, so the payload alone is
--     never trusted. It is fenced by the attempt: a request for attempt 2 means nothing to attempt
--     3, so the column needs no reset at the next claim.
ALTER TABLE pgbus.job
  ADD COLUMN cancel_attempt integer
    CONSTRAINT job_cancel_attempt_check CHECK (cancel_attempt >= 1);

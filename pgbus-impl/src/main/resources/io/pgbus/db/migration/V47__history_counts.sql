-- pgbus schema V47 (issues #29 and #27, "counts that are exact and fast"): the finished jobs of
-- pgbus.job_history counted per day partition, queue and state, kept by statement triggers on
-- pgbus.job_history (R__history.sql), so that the admin API's counts read a few hundred rows
-- instead of every history row, and stay exact whoever writes the history: this release's
-- archive, the previous one's, an operator's DELETE, the reencryption's UPDATE.
--
-- An expand migration: two new small tables and nothing changed in pgbus.job or
-- pgbus.job_history (the triggers come with their function in R__history.sql). No row is counted
-- here: a partition is trusted only once the leader has recounted it under a SHARE lock
-- (pgbus.job_history_recount, one partition per call, ArchiveStore), and until every partition is
-- counted the readers count the history rows as before (capped). docs/schema.md, V47.

-- Jobs per (partition, queue, state). part is the partition's pg_class oid, not its day: a
-- dropped partition's rows stop counting with it (readers join pg_inherits), whoever dropped it,
-- and a partition created again for the same day starts from its own recount.
CREATE TABLE pgbus.job_history_count (
  part  oid NOT NULL,
  queue text NOT NULL,
  state pgbus.job_state NOT NULL,
  jobs  bigint NOT NULL,
  CONSTRAINT job_history_count_pkey PRIMARY KEY (part, queue, state)
);

-- The partitions whose counts are whole: recounted once after the triggers existed.
CREATE TABLE pgbus.job_history_counted (
  part       oid PRIMARY KEY,
  counted_at timestamptz NOT NULL DEFAULT now()
);

-- pgbus schema V31 (issue #29, "a week of per-minute history"): what each queue did per minute,
-- rolled up from pgbus.job by the maintenance leader (pgbus.queue_history_rollup, R__history.sql)
-- and read by the admin API's history and the console's timing charts.
--
-- * queue_minute: one row per queue and minute in which a job of the queue finished or failed an
--   attempt. Minutes without either have no row (the charts draw them as zero). Kept for
--   pgbus.history.retention (7 days by default), so at most 10,080 rows per active queue.
-- * queue_minute_mark: the one row that says up to which minute the history is written. The
--   rollup locks it, writes the minutes after it and moves it on in one transaction, so a minute
--   is written once whichever leader writes it, and a leader that comes after a gap catches up.
--
-- An expand migration: two new tables the previous release never reads.

CREATE TABLE pgbus.queue_minute (
  queue       pgbus.queue_name NOT NULL,
  minute      timestamptz      NOT NULL CHECK (minute = pg_catalog.date_trunc('minute', minute)),
  completed   integer          NOT NULL CHECK (completed >= 0),
  failed      integer          NOT NULL CHECK (failed >= 0),   -- failed attempts (retried or dead)
  dead        integer          NOT NULL CHECK (dead >= 0),
  -- Milliseconds, over the jobs that completed or died in the minute (their last attempt); NULL
  -- when none did. Wait: run_at (or the retry's due time) to the attempt's start; run: the
  -- attempt's start to its end.
  wait_p50_ms bigint, wait_p95_ms bigint, wait_p99_ms bigint,
  run_p50_ms  bigint, run_p95_ms  bigint, run_p99_ms  bigint,
  PRIMARY KEY (queue, minute)
);

-- The pruning's range (minute < now() - retention) and the all-queues reads.
CREATE INDEX queue_minute_minute_idx ON pgbus.queue_minute (minute);

CREATE TABLE pgbus.queue_minute_mark (
  one       boolean     PRIMARY KEY DEFAULT true CHECK (one),
  rolled_to timestamptz NOT NULL CHECK (rolled_to = pg_catalog.date_trunc('minute', rolled_to))
);

-- History starts with the minute this migration ran in.
INSERT INTO pgbus.queue_minute_mark (rolled_to) VALUES (pg_catalog.date_trunc('minute', now()));

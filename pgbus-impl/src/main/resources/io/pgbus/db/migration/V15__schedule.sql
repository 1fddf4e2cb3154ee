-- pgbus schema V15: recurring schedules stored in the database (issue #17, "Recurring schedules").
-- Tables, constraints and indexes only. See docs/schema.md, "pgbus.schedule".
--
-- One row per schedule, made by the Schedules API / admin API (source 'api') or from the
-- configuration at start (source 'config', pgbus.cron.<name>.*). Only the maintenance leader
-- enqueues runs: in the transaction that moves next_run_at past the runs it enqueues, guarded by
-- revision (UPDATE ... WHERE revision = <read>), so a run is enqueued exactly once across JVMs and
-- leader changes, and never with a definition that was changed after the leader read it.
-- pgbus.cron (V3) is no longer written: a config schedule made for a name found there starts after
-- that row's last_run_at, so the upgrade neither repeats nor drops a run.
--
-- Bounds: the same as the Java API (io.pgbus.ScheduleDefinition), for writers that skip it.
CREATE TABLE pgbus.schedule (
  name           text PRIMARY KEY
                 CONSTRAINT schedule_name_chk CHECK (name ~ '^[A-Za-z][A-Za-z0-9_-]{0,62}$'),
  cron           text NOT NULL
                 CONSTRAINT schedule_cron_chk CHECK (length(cron) BETWEEN 1 AND 200),
  zone           text NOT NULL
                 CONSTRAINT schedule_zone_chk CHECK (length(zone) BETWEEN 1 AND 64),
  queue          pgbus.queue_name NOT NULL,
  payload        jsonb NOT NULL
                 CONSTRAINT schedule_payload_chk
                 CHECK (jsonb_typeof(payload) <> 'null' AND octet_length(payload::text) <= 65536),
  priority       integer NOT NULL DEFAULT 0
                 CONSTRAINT schedule_priority_chk CHECK (priority BETWEEN -100 AND 100),
  max_attempts   integer
                 CONSTRAINT schedule_max_attempts_chk CHECK (max_attempts BETWEEN 1 AND 1000),
  misfire        text NOT NULL DEFAULT 'run_once'
                 CONSTRAINT schedule_misfire_chk CHECK (misfire IN ('skip', 'run_once', 'catch_up')),
  -- How many missed runs a 'catch_up' schedule enqueues at most (the latest ones); only there.
  catch_up_limit integer
                 CONSTRAINT schedule_catch_up_chk
                 CHECK ((misfire = 'catch_up') = (catch_up_limit IS NOT NULL)
                        AND catch_up_limit BETWEEN 1 AND 1000),
  paused         boolean NOT NULL DEFAULT false,
  last_run_at    timestamptz,  -- the latest run enqueued (its scheduled instant); null before
  next_run_at    timestamptz,  -- the first run not yet dealt with; null: the cron has no more
  source         text NOT NULL
                 CONSTRAINT schedule_source_chk CHECK (source IN ('config', 'api')),
  revision       bigint NOT NULL DEFAULT 1,  -- +1 on every change: the leader's fence
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  updated_by     text NOT NULL DEFAULT current_user
                 CONSTRAINT schedule_updated_by_chk CHECK (length(updated_by) BETWEEN 1 AND 255)
);

-- The leader's two reads: the due schedules, oldest first, and the earliest next run.
CREATE INDEX schedule_due_idx ON pgbus.schedule (next_run_at) WHERE NOT paused;

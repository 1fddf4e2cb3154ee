-- pgbus schema V10: one row per running engine (issue #13, the admin API's fleet and readers).
-- Tables and indexes only. See docs/schema.md, "pgbus.node".
--
-- Written only when an engine starts, when its listener changes state, and when it stops (the
-- row is deleted): never periodically, so an idle fleet issues no statement for it. seen_at is
-- therefore the last state change, not a proof of life: a reader tells live rows by joining
-- listener_pid to pg_stat_activity's listener backends (application_name 'pgbus-listener').
CREATE TABLE pgbus.node (
  worker_id    text        PRIMARY KEY,
  host         text        NOT NULL,
  pid          bigint,
  started_at   timestamptz NOT NULL,
  seen_at      timestamptz NOT NULL,
  listener     text        NOT NULL,
  mode         text        NOT NULL CHECK (mode IN ('notify', 'polling')),
  -- The backend pid of the engine's LISTEN connection (null before it connects, or without one).
  listener_pid integer,
  -- [{"name":"main","queues":["payments"],"concurrency":8}, ...]
  capsules     jsonb       NOT NULL DEFAULT '[]'
);

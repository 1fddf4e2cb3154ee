-- pgbus schema, version 2: leader election for maintenance (rescue, retention, later cron).
--
-- A lease row with a TTL rather than an advisory lock: an advisory lock lives in a session, and a
-- pooled datasource cannot promise that the session that took it is the one that keeps it.
-- The leader renews its row well inside the TTL; when it dies, the row expires and another JVM
-- takes it over within one TTL. Candidates read the row first and write only when it is free, so
-- a losing candidate takes no row lock.
CREATE TABLE pgbus.leader (
  name       text PRIMARY KEY,
  holder     text NOT NULL,
  elected_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);

-- Test-only: never shipped. RollingUpgradeIT adds this file to the migrations of the build it
-- upgrades to (NextBuild), so that the new build's first server migrates a schema the previous
-- release has never seen, as a real release's expand migration would: a new table, a new nullable
-- column on pgbus.job (whose row type pgbus.claim returns) and a new function. The previous
-- release must keep claiming, completing and electing on it while its servers are replaced.
-- 9001: far above any real migration, so it cannot collide with one.
CREATE TABLE pgbus.rolling_probe (
  id   bigint PRIMARY KEY,
  note text NOT NULL
);

ALTER TABLE pgbus.job ADD COLUMN rolling_note text;

CREATE FUNCTION pgbus.rolling_probe_count() RETURNS bigint
  LANGUAGE sql STABLE
  SET search_path = pg_catalog, pgbus, pg_temp
  AS 'SELECT count(*) FROM pgbus.rolling_probe';

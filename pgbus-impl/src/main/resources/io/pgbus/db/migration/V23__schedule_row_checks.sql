-- pgbus schema V23 (issue #23, "Hardening, second round"): pgbus.schedule refuses a time zone
-- PostgreSQL does not know and a cron expression of the wrong shape, so that a row written by SQL
-- is refused when it is written rather than skipped when the leader reads it. See docs/schema.md
-- "V23".
--
-- The functions are created here because the constraints need them before the repeatable
-- migrations run; their current definitions are in R__checks.sql. The constraints are added NOT
-- VALID: a bad row already there (an older release accepted any zone of 1 to 64 characters from
-- SQL) does not block the migration; the engine skips and reports it (ScheduleEnqueuer, the
-- doctor), and it can be fixed or deleted. Every INSERT and every UPDATE of a row is checked, so
-- such a row has to be fixed in the same UPDATE that changes it, or deleted. The previous release
-- writes only zones that java.time knows and expressions that parse, and PostgreSQL knows every
-- zone java.time does (an IANA name, UTC, or an offset such as +02:00), so it keeps working.
CREATE FUNCTION pgbus.schedule_zone_valid(zone text) RETURNS boolean
  LANGUAGE plpgsql STABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    PERFORM pg_catalog.timezone(schedule_zone_valid.zone, pg_catalog.now());
    RETURN true;
  EXCEPTION WHEN invalid_parameter_value THEN
    RAISE EXCEPTION 'pgbus: unknown time zone % for a schedule: use an IANA zone such as Europe/Berlin, or UTC',
      pg_catalog.quote_literal(pg_catalog.left(schedule_zone_valid.zone, 80))
      USING ERRCODE = 'check_violation';
  END $$;

CREATE FUNCTION pgbus.schedule_cron_valid(cron text) RETURNS boolean
  LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path = pg_catalog, pgbus, pg_temp
  AS $$
  BEGIN
    IF schedule_cron_valid.cron ~ '^\s*(@[A-Za-z]+|[0-9A-Za-z*/,?#-]+(\s+[0-9A-Za-z*/,?#-]+){4,5})\s*$' THEN
      RETURN true;
    END IF;
    RAISE EXCEPTION 'pgbus: invalid cron expression % for a schedule: use 5 fields (minute hour day-of-month month day-of-week, e.g. ''0 3 * * *''), 6 with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly',
      pg_catalog.quote_literal(pg_catalog.left(schedule_cron_valid.cron, 80))
      USING ERRCODE = 'check_violation';
  END $$;

ALTER TABLE pgbus.schedule
  ADD CONSTRAINT schedule_zone_known_chk CHECK (pgbus.schedule_zone_valid(zone)) NOT VALID,
  ADD CONSTRAINT schedule_cron_shape_chk CHECK (pgbus.schedule_cron_valid(cron)) NOT VALID;

-- pgbus.leader: a lease ends at most an hour after it is written (pgbus.leader.ttl is at most 1h,
-- ElectorConfig.TTL). A row written by SQL with expires_at 'infinity' made every JVM's tick fail
-- ("cannot subtract infinite timestamps": no poll, no heartbeat) and, being never expired, kept
-- every JVM from being elected. now() in a CHECK is the time of the write, which is what is meant:
-- a renewal rewrites expires_at. NOT VALID: the lease row of a running leader is not re-checked;
-- the readers (LeaderStore, pgbus.tick) treat a lease beyond the hour as free anyway.
ALTER TABLE pgbus.leader
  ADD CONSTRAINT leader_expires_chk
    CHECK (expires_at OPERATOR(pg_catalog.<=)
           (pg_catalog.now() OPERATOR(pg_catalog.+) interval '1 hour')) NOT VALID;

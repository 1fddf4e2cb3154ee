-- pgbus schema V25 (issue #25, "the compatibility window"): one row that says which builds this
-- schema serves, so that a rolling upgrade keeps the previous release running on it.
--
-- * oldest_build: the oldest pgbus build (release version, major.minor.patch) that runs correctly
--   on this schema. Expand migrations (a new table, column, function; a new body behind the same
--   signature) leave it; a contract migration (a drop, a changed signature or meaning the
--   previous release relies on) raises it to the first release that no longer needs what it
--   removed, in the same V file. A build older than oldest_build stays DOWN ("schema too new")
--   and names the release to deploy. See docs/schema.md, "The compatibility window".
-- * newest_build: the newest build that migrated this schema, written by Schema.migrate under the
--   migration lock. An older build that starts later (a rollback, a restart mid-rollout) never
--   runs Flyway then: it would apply its older repeatable migrations (R__) over the newer
--   functions, migrating down in place.
--
-- Readable by every role, like pgbus.setting: readiness reads it on every check.

CREATE TABLE pgbus.schema_compat (
  one          boolean     PRIMARY KEY DEFAULT true CHECK (one),
  oldest_build text        NOT NULL
                           CHECK (oldest_build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'),
  newest_build text        CHECK (newest_build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$'),
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- 0.1.0: the first release, the first build that reads this table.
INSERT INTO pgbus.schema_compat (oldest_build) VALUES ('0.1.0');

GRANT SELECT ON pgbus.schema_compat TO PUBLIC;

-- pgbus schema V13: JVM heartbeats (issue #14). Tables and indexes only; the heartbeat itself is
-- pgbus.tick (R__tick.sql). See docs/schema.md, "pgbus.node".
--
-- An engine that heartbeats writes its TTL here, and renews seen_at at least every third of it
-- while it runs jobs (and at every poll when idle). The maintenance leader then rescues the
-- running jobs of a node whose seen_at is older than two thirds of its TTL, without waiting for
-- their leases (JobStore.RESCUE). NULL: the row's engine does not heartbeat (an engine from
-- before V13, during a rolling upgrade), and its jobs are rescued on their leases only.
ALTER TABLE pgbus.node
  ADD COLUMN heartbeat_ttl_ms integer
    CONSTRAINT node_heartbeat_ttl_chk CHECK (heartbeat_ttl_ms BETWEEN 1000 AND 3600000);

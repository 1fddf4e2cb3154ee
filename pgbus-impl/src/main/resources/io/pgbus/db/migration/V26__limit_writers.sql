-- pgbus schema V26 (issue #25, "limits written by two builds never flip-flop"): which build
-- last wrote a queue's flow-control limits and the payload limit.
--
-- Each engine writes its configured limits at start (pgbus.queue_limit, pgbus.setting). During a
-- rolling upgrade two builds with different configurations start in turn, and before this the
-- last one to start won, back and forth. Now the newest build wins: an engine writes a row only
-- when no newer build wrote it (Engine.publishQueueLimits, publishPayloadLimit; the build is
-- compared in Java under the row's lock), and records its own version. NULL: written by an
-- operator (pgbus.queue_limit_set from psql leaves the column as it was) or before V26. An
-- expand migration: the previous release neither reads nor writes the column.

ALTER TABLE pgbus.queue_limit
  ADD COLUMN build text CHECK (build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$');

ALTER TABLE pgbus.setting
  ADD COLUMN build text CHECK (build ~ '^[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$');

-- pgbus schema V53 (issue #30, "payload encryption"): the queues that encrypt their payloads, so
-- that the SQL enqueue functions refuse a plaintext payload for them at the enqueue, instead of
-- the handler failing on it at run time. See docs/schema.md, "V53: encrypting queues".
--
-- A table of its own, not a column of pgbus.queue_limit: a row there makes a queue limited (its
-- claims take the row's lock and count its running jobs), which encryption has nothing to do with.
-- One row per encrypting queue, written by every engine at start for the queues it serves or
-- encrypts (pgbus.queue_encrypt_set, R__flow.sql) and removed when one starts without encryption.
--
-- Expand only: a build before V53 neither reads nor writes the table; its enqueues of an encrypting
-- queue are sealed in Java, which the enqueue functions of this schema accept.
CREATE TABLE pgbus.queue_encrypt (
  queue      pgbus.queue_name PRIMARY KEY,
  updated_at timestamptz NOT NULL DEFAULT now(),
  updated_by text NOT NULL DEFAULT current_user
);

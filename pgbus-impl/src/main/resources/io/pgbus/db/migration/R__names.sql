-- Repeatable migration: the current definition of pgbus.queue and pgbus.channel, the names of
-- queues and their NOTIFY channels. Flyway applies it after the versioned migrations and again
-- whenever this file changes. See docs/schema.md, "Where the schema lives".
--
-- Path-independent, not pinned (they are on every enqueue's path): every call that pg_catalog may
-- not match exactly is qualified, every operator has exactly the operand types of a pg_catalog
-- operator. See R__enqueue.sql for why, and SearchPathHijackTest for the proof.

-- Turns a text into a queue name, or fails with a message that names the value and the rule.
-- Queue names are identifiers because they become channel names (pgbus_<queue>).
CREATE OR REPLACE FUNCTION pgbus.queue(name text) RETURNS pgbus.queue_name
  LANGUAGE plpgsql IMMUTABLE
  AS $$
  BEGIN
    IF name IS NULL OR name !~ '^[a-z][a-z0-9_]*$' OR pg_catalog.length(name) > 48 THEN
      RAISE EXCEPTION 'pgbus: invalid queue name %: use a lower-case letter followed by lower-case letters, digits or _, at most 48 characters', pg_catalog.quote_nullable(name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN name::pgbus.queue_name;
  END $$;

-- The channel a queue's wake-ups go to. The single place that maps names to channels.
-- text || text has an exact operator in pg_catalog.
CREATE OR REPLACE FUNCTION pgbus.channel(queue pgbus.queue_name) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT
  AS $$ SELECT 'pgbus_' || queue::text $$;

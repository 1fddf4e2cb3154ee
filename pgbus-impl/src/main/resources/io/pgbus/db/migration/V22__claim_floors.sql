-- pgbus schema V22 (issue #15, "a long transaction elsewhere"): pgbus.claim takes three trailing
-- arguments, the claim floors (floor_queues, floor_priorities, floor_run_ats, each DEFAULT NULL),
-- so every older call means the same. The old signature goes here; the current definition is in
-- R__claim.sql. See docs/schema.md, "Claim floors".
-- IF EXISTS: a fresh install has no R__claim.sql definition yet (the R files run after the V files).
DROP FUNCTION IF EXISTS pgbus.claim(text[], integer, text, interval, integer);

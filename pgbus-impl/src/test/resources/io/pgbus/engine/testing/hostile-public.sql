-- A hostile schema public: a look-alike of every operator and function pgbus might resolve
-- through a caller's search_path, each recording that it ran, then doing what the real one does.
--
-- A name resolves through the path only when the call site is not an exact match of an object in
-- pg_catalog (pg_catalog comes first, and an exact match there always wins): an argument that
-- needs an implicit cast (pgjdbc sends strings as varchar), a domain or enum of pgbus's, an
-- array or polymorphic argument, a VARIADIC function. For each such argument-type combination
-- that pg_catalog can serve, a role that may create in public can plant an exact match, and it
-- wins. This script plants them all, over the types below and every operator name of pg_catalog
-- with at least one binary operator, and over the functions pgbus's SQL names (the caller passes
-- the names: tests scan pgbus's sources). The hits go to public.trap_log and, surviving a
-- rollback, to the sequence public.trap_hits.
--
-- Casts written x::t or CAST(x AS t) resolve through pg_cast, not the path, and CREATE CAST needs
-- ownership of a type involved: no look-alike is possible. Function-style casts (text(x)) are
-- functions and are planted with the rest when named.
--
-- Run as a superuser (or the database owner), after pgbus is migrated: the look-alikes over
-- pgbus's own types need them. Used by TestDatabase (every migrated test database) and by the
-- ITs' -Phostile-public profile.

CREATE TABLE public.trap_log (
  what text NOT NULL,
  query text,
  at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp());
CREATE SEQUENCE public.trap_hits;
GRANT SELECT, INSERT ON public.trap_log TO PUBLIC;
GRANT USAGE, SELECT, UPDATE ON SEQUENCE public.trap_hits TO PUBLIC;

-- A test's own statements (TestDatabase's helper connections, application_name
-- pgbus-test-helper) are not pgbus's: they are not recorded. A hit inside a transaction that
-- rolls back loses its trap_log row; it keeps its count in trap_hits and, where the server lets
-- this superuser's function write files, a file /tmp/pgbus-trap-<database>-<n> that hits()
-- reads back.
CREATE FUNCTION public.trap(what text) RETURNS void
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog
  AS $$
  DECLARE
    n bigint;
  BEGIN
    IF current_setting('application_name') = 'pgbus-test-helper' THEN
      RETURN;
    END IF;
    n := nextval('public.trap_hits'::regclass);
    INSERT INTO public.trap_log (what, query) VALUES (what, current_query());
    BEGIN
      EXECUTE format('COPY (SELECT %L::text, %L::text) TO %L', what, current_query(),
                     format('/tmp/pgbus-trap-%s-%s', current_database(), n));
    EXCEPTION WHEN OTHERS THEN
      NULL;
    END;
  END
  $$;

CREATE PROCEDURE public.plant_look_alikes(function_names text[])
  LANGUAGE plpgsql SET search_path = pg_catalog
AS $plant$
DECLARE
  types regtype[];
  op text;
  l regtype;
  r regtype;
  res regtype;
  n integer := 0;
  f record;
  declared oid[];
  cands regtype[][];
  combo regtype[];
  arity integer;
  i integer;
  j integer;
  total integer;
  idx integer;
  sig text;
  args text;
  params text;
  ret text;
  body text;
  tried text[] := '{}';
BEGIN
  types := ARRAY['text', 'varchar', 'name', 'bpchar', '"char"', 'int2', 'int4', 'int8',
                 'numeric', 'float4', 'float8', 'bool', 'jsonb', 'json', 'jsonpath',
                 'timestamptz', 'timestamp', 'date', 'interval', 'bytea', 'uuid', 'oid',
                 'regclass', 'text[]', 'varchar[]', 'name[]', 'int2[]', 'int4[]', 'int8[]',
                 'numeric[]', 'float8[]', 'bool[]', 'jsonb[]', 'timestamptz[]',
                 'interval[]']::regtype[]
           || ARRAY(SELECT t.oid::regtype FROM pg_type t
                     WHERE t.typnamespace = 'pgbus'::regnamespace AND t.typtype IN ('e', 'd')
                     ORDER BY t.oid)
           || ARRAY(SELECT t.typarray::regtype FROM pg_type t
                     WHERE t.typnamespace = 'pgbus'::regnamespace AND t.typtype IN ('e', 'd')
                       AND t.typarray <> 0
                     ORDER BY t.oid);

  -- Operators: every binary operator name, every pair of the types that pg_catalog serves
  -- without an exact match.
  FOR op IN SELECT DISTINCT o.oprname FROM pg_operator o
             WHERE o.oprnamespace = 'pg_catalog'::regnamespace AND o.oprkind = 'b'
             ORDER BY 1 LOOP
    FOREACH l IN ARRAY types LOOP
      FOREACH r IN ARRAY types LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_operator o
                               WHERE o.oprname = op AND o.oprleft = l AND o.oprright = r
                                 AND o.oprnamespace = 'pg_catalog'::regnamespace);
        BEGIN
          EXECUTE format('SELECT pg_catalog.pg_typeof(NULL::%s OPERATOR(pg_catalog.%s) NULL::%s)::regtype',
                         l, op, r) INTO res;
        EXCEPTION WHEN OTHERS THEN
          CONTINUE;
        END;
        CONTINUE WHEN res IS NULL OR res IN ('unknown'::regtype, 'void'::regtype);
        n := n + 1;
        EXECUTE format(
          'CREATE FUNCTION public.trap_op_%s(a %s, b %s) RETURNS %s LANGUAGE plpgsql'
          ' SET search_path = pg_catalog AS %L',
          n, l, r, res,
          format('BEGIN PERFORM public.trap(%L); RETURN a OPERATOR(pg_catalog.%s) b; END',
                 format('%s %s %s', l, op, r), op));
        EXECUTE format('CREATE OPERATOR public.%s (FUNCTION = public.trap_op_%s, LEFTARG = %s, RIGHTARG = %s)',
                       op, n, l, r);
      END LOOP;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'hostile public: % operators', n;

  -- Functions named in pgbus's SQL: each pg_catalog overload of up to three arguments (a
  -- VARIADIC one called with one to three), over every combination of the types that pg_catalog
  -- serves without an exact match.
  n := 0;
  FOR f IN SELECT p.oid, p.proname, p.pronargs, p.proargtypes::oid[] AS argtypes,
                  p.provariadic, p.prokind, p.proretset
             FROM pg_proc p
            WHERE p.pronamespace = 'pg_catalog'::regnamespace
              AND p.proname = ANY (function_names)
              AND p.prokind IN ('f', 'a')
              AND p.pronargs BETWEEN 1 AND 3
            ORDER BY p.proname, p.oid LOOP
    FOR arity IN (CASE WHEN f.provariadic <> 0 THEN 1 ELSE f.pronargs END)
                 .. (CASE WHEN f.provariadic <> 0 THEN 3 ELSE f.pronargs END) LOOP
      CONTINUE WHEN f.provariadic <> 0 AND arity < f.pronargs - 1;
      CONTINUE WHEN f.prokind = 'a' AND arity <> 1;
      -- The types each position takes, one position at a time (the others their declared type,
      -- or text where that is polymorphic): a screen before the combinations.
      cands := array_fill(NULL::regtype, ARRAY[arity, array_length(types, 1)]);
      FOR i IN 1 .. arity LOOP
        j := 0;
        FOREACH l IN ARRAY types LOOP
          args := '';
          FOR idx IN 1 .. arity LOOP
            args := args || CASE WHEN idx > 1 THEN ', ' ELSE '' END
                    || CASE WHEN idx = i THEN format('(SELECT NULL::%s)', l)
                            ELSE format('(SELECT NULL::%s)', public.stand_in(f.argtypes, f.provariadic, idx)) END;
          END LOOP;
          BEGIN
            -- Arguments as subqueries: never folded, so never run (a NULL key is an error
            -- for some).
            EXECUTE format('SELECT 1 FROM (SELECT pg_catalog.%I(%s)) x LIMIT 0', f.proname, args);
            j := j + 1;
            cands[i][j] := l;
          EXCEPTION WHEN OTHERS THEN
            NULL;
          END;
        END LOOP;
      END LOOP;
      total := 1;
      FOR i IN 1 .. arity LOOP
        total := total * (SELECT count(*) FROM unnest(cands[i:i][:]) c WHERE c IS NOT NULL);
      END LOOP;
      CONTINUE WHEN total = 0 OR total > 3000;
      FOR idx IN 0 .. total - 1 LOOP
        combo := '{}';
        j := idx;
        FOR i IN 1 .. arity LOOP
          DECLARE
            k integer := (SELECT count(*) FROM unnest(cands[i:i][:]) c WHERE c IS NOT NULL);
          BEGIN
            combo := combo || cands[i][(j % k) + 1];
            j := j / k;
          END;
        END LOOP;
        sig := format('%s(%s)', f.proname, array_to_string(combo::text[], ', '));
        CONTINUE WHEN sig = ANY (tried);
        -- An aggregate's look-alike keeps its inputs in an array: not for array inputs.
        CONTINUE WHEN f.prokind = 'a'
                  AND (SELECT t.typelem <> 0 FROM pg_type t WHERE t.oid = combo[1]);
        tried := tried || sig;
        -- An exact match in pg_catalog wins over anything in public.
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_proc p
                               WHERE p.pronamespace = 'pg_catalog'::regnamespace
                                 AND p.proname = f.proname
                                 AND p.proargtypes::oid[] = combo::oid[]);
        args := '';
        params := '';
        FOR i IN 1 .. arity LOOP
          args := args || CASE WHEN i > 1 THEN ', ' ELSE '' END || format('NULL::%s', combo[i]);
          params := params || CASE WHEN i > 1 THEN ', ' ELSE '' END || format('a%s %s', i, combo[i]);
        END LOOP;
        -- The result type, from a view's column: a view is never planned, so nothing runs.
        BEGIN
          IF (SELECT p.prorettype = 'void'::regtype FROM pg_proc p WHERE p.oid = f.oid) THEN
            res := 'void'::regtype;
          ELSE
          EXECUTE format('CREATE TEMPORARY VIEW trap_result AS SELECT pg_catalog.%I(%s) AS x',
                         f.proname, args);
          SELECT a.atttypid::regtype INTO res FROM pg_attribute a
           WHERE a.attrelid = 'pg_temp.trap_result'::regclass AND a.attname = 'x';
          DROP VIEW pg_temp.trap_result;
          END IF;
        EXCEPTION WHEN OTHERS THEN
          CONTINUE;
        END;
        CONTINUE WHEN res IS NULL OR res IN ('unknown'::regtype, 'record'::regtype);
        n := n + 1;
        args := '';
        FOR i IN 1 .. arity LOOP
          args := args || CASE WHEN i > 1 THEN ', ' ELSE '' END || format('a%s', i);
        END LOOP;
        IF f.prokind = 'a' THEN
          -- An aggregate: collect the inputs, then let the real one fold them.
          EXECUTE format(
            'CREATE FUNCTION public.trap_fn_%s(s %s[], v %s) RETURNS %s[] LANGUAGE plpgsql'
            ' SET search_path = pg_catalog AS %L',
            n, combo[1], combo[1], combo[1],
            format('BEGIN PERFORM public.trap(%L); RETURN array_append(s, v); END', sig));
          EXECUTE format(
            'CREATE FUNCTION public.trap_fin_%s(s %s[]) RETURNS %s LANGUAGE sql'
            ' SET search_path = pg_catalog AS %L',
            n, combo[1], res,
            format('SELECT pg_catalog.%I(x) FROM pg_catalog.unnest(s) x', f.proname));
          EXECUTE format(
            'CREATE AGGREGATE public.%I(%s) (SFUNC = public.trap_fn_%s, STYPE = %s[],'
            ' FINALFUNC = public.trap_fin_%s, INITCOND = ''{}'')',
            f.proname, combo[1], n, combo[1], n);
        ELSIF f.proretset THEN
          EXECUTE format(
            'CREATE FUNCTION public.%I(%s) RETURNS SETOF %s LANGUAGE plpgsql'
            ' SET search_path = pg_catalog AS %L',
            f.proname, params, res,
            format('BEGIN PERFORM public.trap(%L); RETURN QUERY SELECT pg_catalog.%I(%s); END',
                   sig, f.proname, args));
        ELSE
          EXECUTE format(
            'CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql'
            ' SET search_path = pg_catalog AS %L',
            f.proname, params, res,
            CASE WHEN res = 'void'::regtype
                 THEN format('BEGIN PERFORM public.trap(%L); PERFORM pg_catalog.%I(%s); END',
                             sig, f.proname, args)
                 ELSE format('BEGIN PERFORM public.trap(%L); RETURN pg_catalog.%I(%s); END',
                             sig, f.proname, args) END);
        END IF;
      END LOOP;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'hostile public: % functions', n;
END
$plant$;

-- The type a position of a pg_catalog function takes when another position is screened: its
-- declared type, or a concrete one where that is polymorphic.
CREATE FUNCTION public.stand_in(argtypes oid[], variadic_type oid, pos integer) RETURNS regtype
  LANGUAGE sql IMMUTABLE SET search_path = pg_catalog
  AS $$
    SELECT CASE
             WHEN t IN ('anyelement'::regtype, 'anycompatible'::regtype, '"any"'::regtype,
                        'anynonarray'::regtype, 'anycompatiblenonarray'::regtype)
               THEN 'text'::regtype
             WHEN t IN ('anyarray'::regtype, 'anycompatiblearray'::regtype) THEN 'text[]'::regtype
             WHEN t = 'anyenum'::regtype THEN 'pgbus.job_state'::regtype
             ELSE t END
      FROM (SELECT CASE WHEN pos <= cardinality(argtypes) AND NOT (variadic_type <> 0 AND pos >= cardinality(argtypes))
                          THEN argtypes[pos]::regtype
                        WHEN variadic_type <> 0 THEN variadic_type::regtype
                        ELSE 'text'::regtype END AS t) s
  $$;

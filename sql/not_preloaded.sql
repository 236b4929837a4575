-- Run on a server WITHOUT shared_preload_libraries = pg_storage_wait: CREATE EXTENSION works,
-- and every function raises SQLSTATE 55000 with a hint naming shared_preload_libraries.
CREATE EXTENSION pg_storage_wait;
SELECT * FROM storage_wait_status();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_ticks();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_samples();
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_io_deltas();
\echo :LAST_ERROR_SQLSTATE
SELECT storage_wait_reset();
\echo :LAST_ERROR_SQLSTATE
-- Every function of the extension, whatever this version adds: called with its defaults, each
-- must raise 55000 with the hint, and the views over them too.
DO $$
DECLARE
    f record;
    state text;
    hint text;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure AS signature, p.proname, p.proretset
        FROM pg_proc p
        JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_storage_wait'
        ORDER BY p.oid::regprocedure::text
    LOOP
        BEGIN
            EXECUTE format('SELECT * FROM %I()', f.proname);
            RAISE NOTICE '% returned without an error', f.signature;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, hint = PG_EXCEPTION_HINT;
            RAISE NOTICE '%: SQLSTATE %, hint names shared_preload_libraries: %', f.signature,
                state, hint LIKE '%shared_preload_libraries%';
        END;
    END LOOP;
    FOR f IN
        SELECT c.oid::regclass AS view_name
        FROM pg_class c
        JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
        JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_storage_wait'
        WHERE c.relkind = 'v'
        ORDER BY c.oid::regclass::text
    LOOP
        BEGIN
            EXECUTE format('SELECT * FROM %s', f.view_name);
            RAISE NOTICE 'view % returned without an error', f.view_name;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE;
            RAISE NOTICE 'view %: SQLSTATE %', f.view_name, state;
        END;
    END LOOP;
END
$$;
DROP EXTENSION pg_storage_wait;

-- Readers are for pg_monitor only; reset is for superusers only.
CREATE ROLE pgsw_plain LOGIN;
CREATE ROLE pgsw_monitor LOGIN IN ROLE pg_monitor;

SET ROLE pgsw_plain;
SELECT ticks FROM storage_wait_status();
SELECT count(*) FROM storage_wait_ticks();
SELECT count(*) FROM storage_wait_samples();
SELECT count(*) FROM storage_io_deltas();
SELECT storage_wait_reset();
RESET ROLE;

SET ROLE pgsw_monitor;
SELECT ticks > 0 AS monitor_can_read FROM storage_wait_status();
SELECT count(*) >= 0 AS monitor_can_read_ticks FROM storage_wait_ticks();
SELECT count(*) >= 0 AS monitor_can_read_samples FROM storage_wait_samples();
SELECT count(*) >= 0 AS monitor_can_read_io FROM storage_io_deltas();
SELECT storage_wait_reset();
RESET ROLE;

-- A superuser may reset; the history is empty right after.
SELECT storage_wait_reset();
SELECT count(*) AS ticks_after_reset FROM storage_wait_ticks(now() - interval '1 hour')
WHERE sample_time < now() - interval '1 second';

-- Every function and view of the extension, whoever added it: none for PUBLIC; every reader for
-- pg_monitor; only storage_wait_reset() kept from it.
SELECT p.oid::regprocedure AS executable_by_public
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid AND d.classid = 'pg_proc'::regclass
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_storage_wait')
  AND has_function_privilege('pgsw_plain', p.oid, 'EXECUTE')
ORDER BY 1;
SELECT p.oid::regprocedure AS not_executable_by_pg_monitor
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid AND d.classid = 'pg_proc'::regclass
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_storage_wait')
  AND NOT has_function_privilege('pgsw_monitor', p.oid, 'EXECUTE')
ORDER BY 1;
SELECT c.oid::regclass AS view_readable_by_public
FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_storage_wait')
  AND has_table_privilege('pgsw_plain', c.oid, 'SELECT')
ORDER BY 1;
SELECT count(*) > 0 AS monitor_reads_every_view
FROM pg_depend d JOIN pg_class c ON c.oid = d.objid AND d.classid = 'pg_class'::regclass
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_storage_wait')
HAVING bool_and(has_table_privilege('pgsw_monitor', c.oid, 'SELECT'));

DROP ROLE pgsw_plain;
DROP ROLE pgsw_monitor;

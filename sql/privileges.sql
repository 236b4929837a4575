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

DROP ROLE pgsw_plain;
DROP ROLE pgsw_monitor;

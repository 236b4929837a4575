-- Reliability (issue 18): the history saver's setting and status columns, and the nits.
SET client_min_messages = warning;  -- run alone or after the other files
CREATE EXTENSION IF NOT EXISTS pg_storage_wait;
RESET client_min_messages;
-- save_interval: seconds, 0 (shutdown only) to 7 days, reloadable.
SELECT name, setting, unit, context, min_val, max_val FROM pg_settings
WHERE name = 'pg_storage_wait.save_interval';
ALTER SYSTEM SET pg_storage_wait.save_interval = -1;
ALTER SYSTEM SET pg_storage_wait.save_interval = '8d';
ALTER SYSTEM SET pg_storage_wait.save_interval = 'often';
ALTER SYSTEM SET pg_storage_wait.save_interval = '1min';
ALTER SYSTEM RESET pg_storage_wait.save_interval;
SELECT context FROM pg_settings WHERE name = 'pg_storage_wait.save_history';
-- The save columns: counts, and a save time only once a save happened.
SELECT history_saves >= 0 AS saves_counted, history_save_failures = 0 AS no_failures,
       (last_history_save_at IS NULL) = (history_saves = 0) AS save_time_iff_saved,
       rollups_truncated >= 0 AS rollups_truncated_counted
FROM storage_wait_status();
-- The saver is a worker of its own, not a session (it has no pg_stat_activity row).
SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'pg_storage_wait history saver';
-- Nit: storage_wait_reset() changes state: never run in a parallel worker.
SELECT proname, proparallel FROM pg_proc WHERE proname = 'storage_wait_reset';
-- Nit: 'infinity' as a resolution is refused (it would silently mean per tick). PostgreSQL 16
-- has no infinite intervals and its GUC range errors carry no units: expected/reliability_1.out.
SELECT count(*) FROM storage_wait_history('1 hour', 'infinity');
SELECT count(*) FROM storage_wait_history('1 hour', '-infinity');
-- Nit: the history's read latency is NULL, not a division by zero, where nothing was read.
SELECT pg_sleep(0.3);
SELECT count(*) > 0 AS rows, bool_and(read_latency_avg_ms IS NULL) AS null_without_reads
FROM storage_wait_history('1 hour') WHERE reads_per_s = 0 OR reads_per_s IS NULL;

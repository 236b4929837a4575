-- storage_device_stats: shape, bad input, the rows' rules, the limit settings, access.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_storage_wait;  -- also when run alone (REGRESS=devices)
RESET client_min_messages;
SELECT pg_sleep(1.2);  -- two readings of /proc/diskstats (the I/O counters, every second)

-- Column names and types are the public API.
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'storage_device_stats'::regclass AND attnum > 0
ORDER BY attnum;

-- Bad windows: 22023, as everywhere.
SELECT * FROM storage_device_stats(NULL);
SELECT * FROM storage_device_stats('0 seconds');
SELECT * FROM storage_device_stats('-5 minutes');
SELECT count(*) >= 1 AS rows_for_all_history FROM storage_device_stats('1000 years');

-- The data directory and pg_wal are each on exactly one row (a block device, or a row with
-- device NULL and the reason); every row has one or the other, and a device row has a reason
-- only when it has no rates (a device just found, or one reading in the window).
SELECT count(*) FILTER (WHERE 'data' = ANY (roles)) AS data_rows,
       count(*) FILTER (WHERE 'wal' = ANY (roles)) AS wal_rows,
       count(*) FILTER (WHERE (device IS NULL AND reason IS NULL)
                           OR (reason IS NOT NULL AND reads_per_s IS NOT NULL))
         AS rows_with_both_or_neither
FROM storage_device_stats('1 minute');

-- Figures are never negative; percentages stay in 0..100; a device without readings has
-- NULL figures; flush await is NULL whenever there were no flushes to time.
SELECT count(*) AS bad_rows FROM storage_device_stats('1 minute')
WHERE reads_per_s < 0 OR writes_per_s < 0 OR read_mb_per_s < 0 OR write_mb_per_s < 0
   OR read_await_ms < 0 OR write_await_ms < 0 OR queue_depth_avg < 0
   OR util_pct NOT BETWEEN 0 AND 100 OR at_limit_pct NOT BETWEEN 0 AND 100
   OR (flushes_per_s = 0 AND flush_await_ms IS NOT NULL)
   OR (device IS NULL AND reads_per_s IS NOT NULL);

-- The view is the function over its default window.
SELECT (SELECT count(*) FROM storage_device_stats) =
       (SELECT count(*) FROM storage_device_stats('5 minutes')) AS view_is_default_window;

-- History carries the data and WAL devices' rates.
SELECT count(*) FILTER (WHERE data_device_iops < 0 OR wal_device_mb_per_s < 0) AS negative,
       count(*) > 0 AS has_rows
FROM storage_wait_history('1 minute');

-- The summary's storage_limit is NULL unless storage-bound.
SELECT storage_limit IS NULL OR verdict = 'storage-bound' AS limit_only_when_storage_bound
FROM storage_wait_summary('1 minute');

-- Limit settings: 0 (unknown) by default, reloadable only, never negative.
SELECT name, setting, context FROM pg_settings
WHERE name LIKE 'pg_storage_wait.%limit' ORDER BY name;
SET pg_storage_wait.data_iops_limit = 3000;
ALTER SYSTEM SET pg_storage_wait.data_iops_limit = -1;

-- Readers are for pg_monitor only.
CREATE ROLE pgsw_devices_nobody;
SET ROLE pgsw_devices_nobody;
SELECT count(*) FROM storage_device_stats('1 minute');
SELECT count(*) FROM storage_device_stats;
RESET ROLE;
CREATE ROLE pgsw_devices_monitor IN ROLE pg_monitor;
SET ROLE pgsw_devices_monitor;
SELECT count(*) >= 1 AS monitor_can_read FROM storage_device_stats;
RESET ROLE;
DROP ROLE pgsw_devices_nobody, pgsw_devices_monitor;

-- storage_probe_latency: shape, bad windows, the probe off (the default), access.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_storage_wait;  -- also when run alone (REGRESS=probe)
RESET client_min_messages;

-- Column names and types are the public API.
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'storage_probe_latency'::regclass AND attnum > 0
ORDER BY attnum;

-- Bad windows: 22023, as everywhere.
SELECT * FROM storage_probe_latency(NULL);
SELECT * FROM storage_probe_latency('0 seconds');
SELECT * FROM storage_probe_latency('-5 minutes');
SELECT count(*) >= 1 AS rows_for_all_history FROM storage_probe_latency('1000 years');

-- Off by default: one row per data or tablespace device, no reads, NULL latencies, a reason.
SELECT current_setting('pg_storage_wait.probe') AS probe,
       current_setting('pg_storage_wait.probe_interval') AS probe_interval;
SELECT count(*) FILTER (WHERE 'data' = ANY (roles)) AS data_rows,
       count(*) FILTER (WHERE probes <> 0) AS rows_with_reads,
       count(*) FILTER (WHERE latency_p50_ms IS NOT NULL OR latency_p999_ms IS NOT NULL
                          OR latency_max_ms IS NOT NULL) AS rows_with_latency,
       count(*) FILTER (WHERE reason IS NULL) AS rows_without_reason,
       count(*) FILTER (WHERE reason = 'pg_storage_wait.probe is off'
                          OR reason LIKE 'no block device:%nothing to probe%') AS rows_saying_why
FROM storage_probe_latency('1 minute');

-- The view is the function over its default window.
SELECT (SELECT count(*) FROM storage_probe_latency) =
       (SELECT count(*) FROM storage_probe_latency('5 minutes')) AS view_is_default_window;

-- Readers are for pg_monitor only.
CREATE ROLE pgsw_probe_nobody;
SET ROLE pgsw_probe_nobody;
SELECT count(*) FROM storage_probe_latency('1 minute');
SELECT count(*) FROM storage_probe_latency;
RESET ROLE;
CREATE ROLE pgsw_probe_monitor IN ROLE pg_monitor;
SET ROLE pgsw_probe_monitor;
SELECT count(*) >= 1 AS monitor_can_read FROM storage_probe_latency;
RESET ROLE;
DROP ROLE pgsw_probe_nobody, pgsw_probe_monitor;

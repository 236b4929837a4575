-- Bad settings are refused with a clear message.
SET pg_storage_wait.sample_interval = 50;
SET pg_storage_wait.tick_records = 10;
ALTER SYSTEM SET pg_storage_wait.sample_interval = 5;
ALTER SYSTEM SET pg_storage_wait.sample_interval = '2 hours';
ALTER SYSTEM SET pg_storage_wait.sample_interval = 'fast';
ALTER SYSTEM SET pg_storage_wait.io_read_interval = 0;
ALTER SYSTEM SET pg_storage_wait.io_read_interval = '2 hours';
ALTER SYSTEM SET pg_storage_wait.io_read_interval = 'often';
ALTER SYSTEM SET pg_storage_wait.tick_records = 10;
ALTER SYSTEM SET pg_storage_wait.rollup_records = 0;
ALTER SYSTEM SET pg_storage_wait.entries_per_tick = 1;
ALTER SYSTEM SET pg_storage_wait.save_history = 'maybe';
ALTER SYSTEM SET pg_storage_wait.no_such_setting = 1;
-- Units are accepted.
ALTER SYSTEM SET pg_storage_wait.sample_interval = '1s';
ALTER SYSTEM RESET pg_storage_wait.sample_interval;
ALTER SYSTEM SET pg_storage_wait.io_read_interval = '1s';
ALTER SYSTEM RESET pg_storage_wait.io_read_interval;
-- The probe: on/off and its interval are reloadable only; the interval is 10 ms .. 1 h.
SET pg_storage_wait.probe = on;
SET pg_storage_wait.probe_interval = '1s';
ALTER SYSTEM SET pg_storage_wait.probe = 'sometimes';
ALTER SYSTEM SET pg_storage_wait.probe_interval = 5;
ALTER SYSTEM SET pg_storage_wait.probe_interval = '2 hours';
ALTER SYSTEM SET pg_storage_wait.probe_interval = '2h';
ALTER SYSTEM SET pg_storage_wait.probe_interval = 'often';
ALTER SYSTEM SET pg_storage_wait.probe_interval = '250ms';
ALTER SYSTEM RESET pg_storage_wait.probe_interval;
SELECT name, setting, unit, context, boot_val, min_val, max_val FROM pg_settings
WHERE name LIKE 'pg_storage_wait.probe%' ORDER BY name;
-- The what-if's reference latencies: any session may set its own; positive milliseconds.
SET pg_storage_wait.reference_read_latency = 0;
SET pg_storage_wait.reference_read_latency = -1;
SET pg_storage_wait.reference_read_latency = 'fast';
SET pg_storage_wait.reference_flush_latency = '20 s';
SET pg_storage_wait.reference_read_latency = '0.3ms';
SET pg_storage_wait.reference_flush_latency = '250us';
SELECT current_setting('pg_storage_wait.reference_read_latency') AS read_reference,
       current_setting('pg_storage_wait.reference_flush_latency') AS flush_reference;
RESET pg_storage_wait.reference_read_latency;
RESET pg_storage_wait.reference_flush_latency;

-- The sampler runs and describes itself.
CREATE EXTENSION pg_storage_wait;

-- Wait (at most 30 s) until the worker has recorded a few ticks.
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXIT WHEN (SELECT ticks >= 3 FROM storage_wait_status());
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;

SELECT ticks >= 3 AS ticking,
       sample_interval_ms,
       last_tick_at > now() - interval '10 seconds' AS recent_tick,
       overruns >= 0 AS overruns_counted,
       tick_cost_avg_us >= 0 AND tick_cost_max_us >= tick_cost_avg_us AS cost_measured,
       shared_memory_bytes > 1000000 AS shared_memory_sized,
       retention_seconds = current_setting('pg_storage_wait.tick_records')::int * 0.1
         AS retention_follows_interval,
       rollup_retention_seconds,
       restored_from_disk,
       track_io_timing,
       track_wal_io_timing,
       in_recovery,
       worker_pid IS NOT NULL AS worker_running,
       worker_starts,
       counter_resets,
       wal_source IN ('pg_stat_wal', 'pg_stat_io') AS wal_source_known,
       ticks_retained >= 3 AS ticks_retained,
       rollups_retained >= 0 AS rollups_retained
FROM storage_wait_status();

-- The worker is visible in pg_stat_activity, connected to no database.
SELECT backend_type, datname FROM pg_stat_activity
WHERE pid = (SELECT worker_pid FROM storage_wait_status());

-- Settings and their units.
SELECT name, setting, unit, context
FROM pg_settings WHERE name LIKE 'pg_storage_wait.%' ORDER BY name;

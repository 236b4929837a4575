-- Raw readers: shapes, names translated at read time, and bad input.
SELECT pg_sleep(0.5);

-- This session is an active client backend on CPU or in some wait: at least one tick shows
-- it, and every tick carries its interval and flags.
SELECT count(*) > 0 AS have_ticks,
       bool_and(interval_ms >= 0) AS intervals_known,
       bool_and(processes > 0) AS processes_seen,
       bool_and(active_samples >= storage_samples + cpu_samples + lock_samples) AS categories_add_up,
       bool_and(track_io_timing) AS io_timing_seen
FROM storage_wait_ticks(now() - interval '1 minute');

SELECT count(*) > 0 AS checkpointer_sampled
FROM storage_wait_samples(now() - interval '1 minute')
WHERE backend_type = 'checkpointer';

SELECT DISTINCT wait_category
FROM storage_wait_samples(now() - interval '1 minute')
WHERE wait_category NOT IN ('cpu', 'storage', 'lock', 'other', 'idle');

-- Deltas are never negative.
SELECT count(*) AS negative_deltas
FROM storage_io_deltas(now() - interval '1 minute')
WHERE ops < 0 OR time_ms < 0 OR bytes < 0;

-- A future window is empty, not an error.
SELECT count(*) FROM storage_wait_ticks(now() + interval '1 hour');

-- NULL windows are rejected with SQLSTATE 22023.
SELECT * FROM storage_wait_ticks(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_samples(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_io_deltas(NULL);
\echo :LAST_ERROR_SQLSTATE

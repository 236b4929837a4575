-- The answer functions: shapes, NULL rules, bad input, clamping and access.
SELECT pg_sleep(0.3);

-- Column names and types are the public API (dashboards depend on them).
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'storage_wait_summary'::regclass AND attnum > 0
ORDER BY attnum;

-- One row, always; a window of a few ticks on a quiet server is idle with a NULL score.
SELECT count(*) AS rows FROM storage_wait_summary('1 second');
SELECT ticks > 0 AS ticked,
       window_end - window_start AS window_length,
       verdict IN ('storage-bound', 'cpu-bound', 'lock-bound', 'mixed', 'idle') AS verdict_known,
       -- NULL below 10 active samples, or when the storage waits' latency is unknown (a
       -- window of a few seconds may hold waits whose I/O is not published yet): the hint
       -- says which.
       (storage_bound_score IS NULL) =
         (backend_samples < 10 OR hint LIKE '%whether faster storage would help cannot be told%')
         AS score_null_has_a_reason,
       hint IS NOT NULL AND hint <> '' AS has_hint,
       track_io_timing, track_wal_io_timing, source
FROM storage_wait_summary('10 seconds');

-- Latency columns are NULL, never 0, when nothing was timed.
SELECT count(*) AS zero_latencies FROM storage_wait_summary('10 seconds')
WHERE read_latency_avg_ms = 0 OR read_latency_p50_ms = 0 OR wal_fsync_latency_avg_ms = 0;

-- The view is the function over its default window.
SELECT count(*) AS rows FROM storage_wait_summary;
SELECT window_end - window_start AS default_window FROM storage_wait_summary;

-- Activity for the profile below, made here (a fresh server has none): CPU work in this
-- session until the sampler has seen it active (100 ms ticks: a few tenths of a second).
DO $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM count(*) FROM generate_series(1, 100000);
    EXIT WHEN (SELECT count(*) > 0 FROM storage_wait_events('1 minute'));
  END LOOP;
END $$;

-- Wait-event profile: shares of active samples add up to 100; idle waits are excluded.
SELECT round(sum(share_pct)) AS total_share, bool_or(wait_category = 'idle') AS has_idle
FROM storage_wait_events('1 minute');
SELECT count(*) AS unknown_categories FROM storage_wait_events('1 minute')
WHERE wait_category NOT IN ('cpu', 'storage', 'lock', 'other')
   OR is_storage <> (wait_category = 'storage');

-- I/O latency: one row per moving pg_stat_io cell; latency NULL for untimed operations.
SELECT count(*) AS timed_hits FROM storage_io_latency('1 minute')
WHERE operation = 'hit' AND latency_avg_ms IS NOT NULL;
SELECT count(*) AS negative_rates FROM storage_io_latency('1 minute')
WHERE ops < 0 OR ops_per_s < 0 OR bytes_per_s < 0;

-- History: one row per tick by default, or per bucket; sample_time first, for Grafana.
SELECT proargnames FROM pg_proc WHERE proname = 'storage_wait_history';
SELECT (SELECT count(*) FROM storage_wait_history('5 seconds')) >=
       (SELECT count(*) FROM storage_wait_history('5 seconds', '1 second')) AS buckets_coarser;
SELECT bool_and(extract(microseconds FROM sample_time)::bigint % 1000000 = 0) AS aligned
FROM storage_wait_history('5 seconds', '1 second');
-- (Each call reads the clock: a 100 ms tick can land between the two, or one slide out.)
SELECT abs(sum(ticks) - (SELECT sum(ticks) FROM storage_wait_history('30 seconds'))) <= 2
         AS buckets_add_up
FROM storage_wait_history('30 seconds', '10 seconds');

-- Where a transaction's time goes: the seven components, their shares adding up to 100.
SELECT string_agg(component, ',' ORDER BY component) AS components, count(*) AS rows,
       round(sum(share_pct)) AS total_share
FROM storage_wait_breakdown('1 minute');
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute WHERE attrelid = 'storage_wait_breakdown'::regclass AND attnum > 0
ORDER BY attnum;
-- Per-transaction figures are NULL exactly when the hint says why.
SELECT (xact_time_ms IS NULL) = (hint LIKE '%No time per transaction:%') AS null_has_a_reason,
       (xact_time_at_reference_ms IS NULL) >= (xact_time_ms IS NULL) AS what_if_needs_xacts,
       verdict IN ('storage-bound', 'replication-bound', 'cpu-bound', 'lock-bound', 'mixed', 'idle')
         AS verdict_known
FROM storage_wait_summary('1 minute');
-- The what-if is the session's own: a reference device slower than anything measured here (10 s,
-- the setting's maximum) leaves nothing to gain.
SET pg_storage_wait.reference_read_latency = '10s';
SET pg_storage_wait.reference_flush_latency = '10s';
SELECT speedup_at_reference IS NULL OR speedup_at_reference = 1 AS nothing_to_gain
FROM storage_wait_summary('1 minute');
RESET pg_storage_wait.reference_read_latency;
RESET pg_storage_wait.reference_flush_latency;

-- The what-if as a function: the same projection for latencies given as arguments (NULL: the
-- settings), with the loop behind it; NULLs come with a reason.
SELECT proargnames FROM pg_proc WHERE proname = 'storage_wait_what_if';
SELECT w.reference_read_latency_ms = 0.1 AS default_read_reference,
       w.reference_flush_latency_ms = 0.1 AS default_flush_reference,
       (w.xact_time_at_reference_ms IS NULL) = (w.reason IS NOT NULL OR w.xact_time_ms IS NULL)
         AS null_has_a_reason,
       w.speedup_at_reference IS NULL OR w.speedup_at_reference >= 1 AS never_slower,
       w.cpu_busy_pct IS NULL OR w.cpu_busy_pct BETWEEN 0 AND 100 AS cpu_share
FROM storage_wait_what_if('1 minute') w;
SELECT reference_read_latency_ms, reference_flush_latency_ms
FROM storage_wait_what_if('1 minute', 0.3, NULL);
-- A slower reference can only lower the projected gain.
SELECT coalesce(fast.speedup_at_reference >= slow.speedup_at_reference, true) AS monotonic
FROM storage_wait_what_if('1 minute', 0.01, 0.01) fast,
     storage_wait_what_if('1 minute', 10000, 10000) slow;
SELECT * FROM storage_wait_what_if('1 minute', 0, NULL);
SELECT * FROM storage_wait_what_if('1 minute', NULL, -1);
SELECT * FROM storage_wait_what_if('1 minute', 'NaN', NULL);
SELECT * FROM storage_wait_what_if('1 minute', 'infinity', NULL);
SELECT * FROM storage_wait_what_if(NULL);
SELECT * FROM storage_wait_what_if('-1 minute');

-- Query ids: no query text anywhere, ids joinable to pg_stat_statements.queryid.
SELECT count(*) >= 0 AS ok FROM storage_wait_queries('1 minute');
SELECT proargnames FROM pg_proc WHERE proname = 'storage_wait_queries';

-- Bad windows: SQLSTATE 22023 with a clear message.
SELECT * FROM storage_wait_summary(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_summary('0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_summary('-5 minutes');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_events('-1 second');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_io_latency(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_queries('0');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_history('1 hour', '0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_history(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_breakdown(NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_breakdown('0 seconds');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM storage_wait_breakdown('-1 minute');
\echo :LAST_ERROR_SQLSTATE

-- A window beyond the retention is clamped, with a NOTICE.
SELECT window_end - window_start AS clamped_window FROM storage_wait_summary('30 days');

-- Access: pg_monitor members only, through functions and views.
CREATE ROLE pgsw_plain2 LOGIN;
CREATE ROLE pgsw_monitor2 LOGIN IN ROLE pg_monitor;
SET ROLE pgsw_plain2;
SELECT verdict FROM storage_wait_summary();
SELECT verdict FROM storage_wait_summary;
SELECT count(*) FROM storage_wait_events;
SELECT count(*) FROM storage_io_latency;
SELECT count(*) FROM storage_wait_queries;
SELECT count(*) FROM storage_wait_history();
SELECT count(*) FROM storage_wait_breakdown;
RESET ROLE;
SET ROLE pgsw_monitor2;
SELECT count(*) AS monitor_summary FROM storage_wait_summary;
SELECT count(*) >= 0 AS monitor_events FROM storage_wait_events;
SELECT count(*) >= 0 AS monitor_io FROM storage_io_latency;
SELECT count(*) >= 0 AS monitor_queries FROM storage_wait_queries;
SELECT count(*) >= 0 AS monitor_history FROM storage_wait_history();
SELECT count(*) AS monitor_breakdown FROM storage_wait_breakdown;
RESET ROLE;
DROP ROLE pgsw_plain2;
DROP ROLE pgsw_monitor2;
